import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { isUniqueViolation } from '../../db/errors.js'
import { errors } from '../../errors.js'
import * as repo from './idempotency.repository.js'
import { IDEMPOTENCY_WINDOW_MS } from './idempotency.types.js'

export type IdempotencyOutcome =
  | { kind: 'proceed' }
  | { kind: 'replay'; status: number; contentType: string; body: string }

/** What IdempotencyService is built on. */
export interface IdempotencyServiceDeps {
  db: Kysely<DB>
  clock: Clock
  opts: { lockMs: number }
}

/**
 * `Idempotency-Key` for ordering and charging requests, stored in the database so it holds across
 * instances: the same key and request within 24 hours answers the first response again, byte for byte;
 * the same key with another request answers 409. A key claimed by a request that never answered (its instance died)
 * is claimed anew by a retry once the claim is older than `lockMs`, longer than any request may run.
 */
export class IdempotencyService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly opts: { lockMs: number }

  constructor(deps: IdempotencyServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.opts = deps.opts
  }

  static hash(method: string, path: string, body: unknown): string {
    return createHash('sha256')
      .update(`${method} ${path}\n${JSON.stringify(body ?? null)}`)
      .digest('hex')
  }

  /** Claims `key` for this request, or says what to answer instead. */
  async begin(accountId: number, key: string, requestHash: string): Promise<IdempotencyOutcome> {
    const now = this.clock.now()
    for (let attempt = 0; attempt < 2; attempt++) {
      const existing = await repo.findKey(this.db, accountId, key)
      const age = existing ? now.getTime() - Date.parse(existing.created_at) : 0
      // A key whose first request never finished (its instance died) is freed once no request can still be running.
      if (existing && (age >= IDEMPOTENCY_WINDOW_MS || (existing.status === null && age >= this.opts.lockMs))) {
        await repo.removeClaim(this.db, accountId, key, existing.id)
      } else if (existing) {
        if (existing.request_hash !== requestHash) throw errors.idempotencyConflict()
        if (existing.status === null) throw errors.idempotencyInProgress()
        return {
          kind: 'replay',
          status: existing.status,
          contentType: existing.content_type ?? 'application/json; charset=utf-8',
          body: existing.body ?? '',
        }
      }
      try {
        await repo.insertPending(this.db, accountId, key, requestHash, iso(now))
        return { kind: 'proceed' }
      } catch (err) {
        if (!isUniqueViolation(err)) throw err
        // Another request claimed the key between our read and insert: read again and answer as it says.
      }
    }
    throw errors.idempotencyInProgress()
  }

  /** Stores the first response; a server error frees the key so the client may retry. */
  async finish(
    accountId: number,
    key: string,
    response: { status: number; contentType: string; body: string },
  ): Promise<void> {
    if (response.status >= 500) await repo.remove(this.db, accountId, key)
    else await repo.complete(this.db, accountId, key, response)
  }
}
