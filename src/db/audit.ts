import type { Insertable } from 'kysely'
import type { Db } from './database.js'
import type { AuditLogTable } from './tables.js'

/** One row of the audit log, as written. */
export type AuditEntry = Insertable<AuditLogTable>

/** Appends a row to the audit log: an API call, or what a job did for an account that the operator must see. */
export async function insertAuditEntry(db: Db, entry: AuditEntry): Promise<void> {
  await db.insertInto('audit_log').values(entry).execute()
}
