import { sql, type Kysely } from 'kysely'
import type { Db, Dialect } from '../../db/database.js'
import type { DB } from '../../db/tables.js'
import type { NormalisedRecord } from '../dns/records.js'

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

/** Inserts an active domain and its records, as a seed file describes them (the provider's nameserver profile). */
export async function insertDomainWithRecords(
  db: Kysely<DB>,
  d: {
    accountId: number
    name: string
    renewalDate: string
    tags: string[]
    isLocked: boolean
    nameservers: { hostname: string; ipv4: string; ipv6: string }[]
    serial: number
    now: string
    records: NormalisedRecord[]
  },
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { id } = await trx
      .insertInto('domains')
      .values({
        account_id: d.accountId,
        name: d.name,
        status: 'active',
        status_id: 1,
        renewal_date: d.renewalDate,
        tags: JSON.stringify(d.tags),
        nameservers: JSON.stringify(d.nameservers),
        nameserver_profile: 'default-mijnhost',
        is_locked: d.isLocked ? 1 : 0,
        dnssec_enabled: 0,
        dnssec_keys: '[]',
        forwarder: null,
        forwarder_enabled: 0,
        managed_dns: 1,
        contacts: '{}',
        cancel_at: null,
        zone_serial: d.serial,
        created_at: d.now,
        updated_at: d.now,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    if (d.records.length) {
      await trx.insertInto('dns_records').values(d.records.map((r) => ({ domain_id: id, ...r, created_at: d.now }))).execute()
    }
    return id
  })
}
