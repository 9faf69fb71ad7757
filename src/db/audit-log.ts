import type { Insertable } from 'kysely'
import type { Db } from './database.js'
import type { AuditLogTable } from './tables.js'

/**
 * The audit row of a request, handed to the service that makes its change: written in the change's transaction,
 * so the change and its record commit together (one commit instead of two); `written` is set once committed.
 */
export interface PendingAudit {
  row: Insertable<AuditLogTable>
  written: boolean
}

/** An insert of the audit row, as a statement of its own or as part of a larger one. */
export const auditInsert = (db: Db, audit: PendingAudit) => db.insertInto('audit_log').values(audit.row)
