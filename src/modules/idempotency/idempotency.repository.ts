import { iso } from '../../clock.js'
import type { Db } from '../../db/database.js'
import { IDEMPOTENCY_WINDOW_MS } from './idempotency.types.js'

export const findKey = (db: Db, accountId: number, key: string) =>
  db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('idem_key', '=', key)
    .executeTakeFirst()

export const insertPending = (db: Db, accountId: number, key: string, requestHash: string, createdAt: string) =>
  db
    .insertInto('idempotency_keys')
    .values({ account_id: accountId, idem_key: key, request_hash: requestHash, created_at: createdAt })
    .execute()

export const complete = (
  db: Db,
  accountId: number,
  key: string,
  response: { status: number; contentType: string; body: string },
) =>
  db
    .updateTable('idempotency_keys')
    .set({ status: response.status, content_type: response.contentType, body: response.body })
    .where('account_id', '=', accountId)
    .where('idem_key', '=', key)
    .execute()

export const remove = (db: Db, accountId: number, key: string) =>
  db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('idem_key', '=', key).execute()

/** Deletes one claim of a key (by row id), so two retries freeing it at once do not delete each other's claims. */
export const removeClaim = (db: Db, accountId: number, key: string, id: number) =>
  db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', accountId)
    .where('idem_key', '=', key)
    .where('id', '=', id)
    .execute()

/** Deletes the keys older than the window at `now` (the daily prune); resolves with how many. */
export const pruneExpired = async (db: Db, now: Date): Promise<number> =>
  Number(
    (
      await db
        .deleteFrom('idempotency_keys')
        .where('created_at', '<', iso(new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)))
        .executeTakeFirst()
    ).numDeletedRows,
  )
