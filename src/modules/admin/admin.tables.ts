import type { Generated, Selectable } from 'kysely'

/** The operator's tables. */
export interface AdminTables {
  admin_tokens: AdminTokensTable
}

export interface AdminTokensTable {
  id: Generated<number>
  /** SHA-256 of the whole token, hex. */
  token_hash: string
  prefix: string
  label: string
  last_used_at: string | null
  revoked_at: string | null
  created_at: string
}

export type AdminToken = Selectable<AdminTokensTable>
