import { sql, type Kysely } from 'kysely'
import type { Db, Dialect } from '../../db/database.js'
import type { DB } from '../../db/tables.js'

/**
 * The built-in drivers' simulated world (registry names, hypervisor machines and addresses): it mirrors
 * account resources, so a sandbox reset empties it with them.
 */
const SIMULATOR_TABLES = ['registry_domains', 'hv_floating_ips', 'hv_instances']

/**
 * Deletes all account data, keeping the provider's catalogue (prices, products, CA), admin tokens and the
 * jobs and audit rows that belong to no account. Rows are found by `account_id` (with the cascades of
 * `accounts`), so tables added later are covered. Emptied tables start their ids at 1 again.
 */
export async function wipeAccountData(db: Kysely<DB>, dialect: Dialect, schema: string | null): Promise<void> {
  const tables = (await db.introspection.getTables()).filter((t) => dialect === 'sqlite' || t.schema === (schema ?? 'public'))
  const names = new Set(tables.map((t) => t.name))
  const withAccount = tables.filter((t) => t.name !== 'accounts' && t.columns.some((c) => c.name === 'account_id')).map((t) => t.name)
  const idTables = tables.filter((t) => t.columns.some((c) => c.name === 'id' && c.isAutoIncrementing)).map((t) => t.name)
  await db.transaction().execute(async (trx) => {
    // Before the accounts: tables whose account_id is set null on delete would keep the rows.
    for (const t of withAccount) await sql`delete from ${sql.table(t)} where account_id is not null`.execute(trx)
    await sql`delete from accounts`.execute(trx)
    for (const t of SIMULATOR_TABLES) if (names.has(t)) await sql`delete from ${sql.table(t)}`.execute(trx)
    for (const t of idTables) {
      const left = await sql<{ n: number }>`select count(*) as n from ${sql.table(t)}`.execute(trx)
      if (Number(left.rows[0].n) !== 0) continue
      if (dialect === 'sqlite') await sql`delete from sqlite_sequence where name = ${t}`.execute(trx)
      else await sql`select setval(pg_get_serial_sequence(${t}, 'id'), 1, false)`.execute(trx)
    }
  })
}

export const setAccountStatus = (db: Db, accountId: number, status: 'active' | 'suspended') =>
  db.updateTable('accounts').set({ status }).where('id', '=', accountId).execute()
