import type { Insertable, Kysely, Transaction } from 'kysely'
import type { AuditLogTable, DB } from './tables.js'

// Db of database.ts, written out: database.ts builds its Kysely instance with auditInsert.
type Db = Kysely<DB> | Transaction<DB>

/** One row of the audit log, as written. */
export type AuditEntry = Insertable<AuditLogTable>

/** Appends a row to the audit log: an API call, or what a job did for an account that the operator must see. */
export async function insertAuditEntry(db: Db, entry: AuditEntry): Promise<void> {
  await auditInsert(db, entry).execute()
}

/** The insert of an audit row, to run or to compile (the request's row, written before its transaction's COMMIT). */
export const auditInsert = (db: Db, entry: AuditEntry) => db.insertInto('audit_log').values(entry).returning('id')

/** Sets the status of the audit row `id`: a call whose change committed with its row, then answered otherwise. */
export async function setAuditStatus(db: Db, id: number, status: number): Promise<void> {
  await db.updateTable('audit_log').set({ status }).where('id', '=', id).execute()
}
