import { sql, type Kysely } from 'kysely'
import type { Dialect } from '../../db/database.js'
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
export async function wipeAccountData(db: Kysely<DB>, dialect: Dialect): Promise<void> {
  const tables = await tableColumns(db, dialect)
  const names = new Set(tables.keys())
  const withAccount = [...tables].filter(([t, cols]) => t !== 'accounts' && cols.has('account_id')).map(([t]) => t)
  const idTables = [...tables].filter(([, cols]) => cols.has('id')).map(([t]) => t)
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

/**
 * The application's tables and their columns. On PostgreSQL only the current schema is read (other
 * deployments' schemas on the same server, created and dropped at any time, are none of our business).
 */
async function tableColumns(db: Kysely<DB>, dialect: Dialect): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>()
  if (dialect === 'postgres') {
    const rows = await sql<{ table_name: string; column_name: string }>`
      select c.table_name, c.column_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'`.execute(db)
    for (const r of rows.rows) {
      let columns = out.get(r.table_name)
      if (!columns) {
        columns = new Set()
        out.set(r.table_name, columns)
      }
      columns.add(r.column_name)
    }
  } else {
    for (const t of await db.introspection.getTables()) out.set(t.name, new Set(t.columns.map((c) => c.name)))
  }
  for (const name of [...out.keys()]) if (name.startsWith('kysely_')) out.delete(name)
  return out
}
