import { sql } from 'kysely'
import type { Db } from '../../db/database.js'
import type { SealedColumn } from '../../lib/secret-box.js'

/** The stored check value named `name`, if any. */
export const findCheck = (db: Db, name: string) =>
  db.selectFrom('secret_key_checks').select(['name', 'value']).where('name', '=', name).executeTakeFirst()

/** Stores the check unless one is stored already (another instance may store it at the same moment). */
export const insertCheckIfAbsent = (db: Db, name: string, value: string, now: string) =>
  db
    .insertInto('secret_key_checks')
    .values({ name, value, updated_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()

/** Replaces the check value, if it is still `old`. */
export const replaceCheck = (db: Db, name: string, old: string, value: string, now: string) =>
  db
    .updateTable('secret_key_checks')
    .set({ value, updated_at: now })
    .where('name', '=', name)
    .where('value', '=', old)
    .execute()

/** A row's sealed value (or plaintext from before sealing) with the columns its context reads. */
export interface SealedValue {
  id: number
  value: string
  row: Record<string, unknown>
}

/** Up to `limit` rows holding a value in `col`, by id after `after`. */
export async function sealedValues(db: Db, col: SealedColumn, after: number, limit: number): Promise<SealedValue[]> {
  const columns = sql.join([col.column, ...col.reads].map((c) => sql.ref(c)))
  const { rows } = await sql<Record<string, unknown>>`select id, ${columns} from ${sql.table(col.table)}
    where ${sql.ref(col.column)} is not null and id > ${after} order by id limit ${limit}`.execute(db)
  return rows.map((row) => ({ id: Number(row.id), value: String(row[col.column]), row }))
}

/** Replaces the value of `col` in row `id`, if it still is `old`; returns 1 when replaced, 0 when it changed meanwhile. */
export async function replaceSealedValue(db: Db, col: SealedColumn, id: number, old: string, value: string) {
  const r = await sql`update ${sql.table(col.table)} set ${sql.ref(col.column)} = ${value}
    where id = ${id} and ${sql.ref(col.column)} = ${old}`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
