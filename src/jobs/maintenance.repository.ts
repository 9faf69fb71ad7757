import type { Db } from '../db/database.js'

/** Deletes the audit rows written before `cutoff` (the daily prune); resolves with how many. */
export const deleteAuditBefore = async (db: Db, cutoff: string): Promise<number> =>
  Number((await db.deleteFrom('audit_log').where('created_at', '<', cutoff).executeTakeFirst()).numDeletedRows)
