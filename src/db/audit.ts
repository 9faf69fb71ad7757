import type { Insertable } from 'kysely'
import type { Db } from './database.js'
import type { AuditLogTable } from './tables.js'

/** One row of the audit log, as written. */
export type AuditEntry = Insertable<AuditLogTable>

/** Appends a row to the audit log: an API call, or what a job did for an account that the operator must see. */
export async function insertAuditEntry(db: Db, entry: AuditEntry): Promise<void> {
  await db.insertInto('audit_log').values(entry).execute()
}

/**
 * The audit row of a request, handed to the service that makes its change: written in the change's transaction,
 * so the change and its record commit together (one commit instead of two); `written` is set once committed.
 */
export interface PendingAudit {
  row: AuditEntry
  written: boolean
}

/** An insert of the audit row, as a statement of its own or as part of a larger one. */
export const auditInsert = (db: Db, audit: PendingAudit) => db.insertInto('audit_log').values(audit.row)
