import type { Generated } from 'kysely'

export interface IdempotencyTables {
  idempotency_keys: IdempotencyKeysTable
}

/** The first answer to an ordering or charging request, kept 24 hours under the caller's Idempotency-Key. */
export interface IdempotencyKeysTable {
  id: Generated<number>
  account_id: number
  idem_key: string
  /** SHA-256 of method, path and body. */
  request_hash: string
  /** Null while the first request is still being handled. */
  status: number | null
  content_type: string | null
  body: string | null
  created_at: string
}
