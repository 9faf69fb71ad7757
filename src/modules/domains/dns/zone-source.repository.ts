import { onPostgres, type Db } from '../../../db/database.js'
import type { ServedZone } from '../../../drivers/dns/dns.js'
import { pagedRecords } from './dns.repository.js'

/** The statuses of a domain whose zone is served. */
export const SERVED_DOMAIN_STATUSES = ['active', 'pending_cancellation'] as const

// The DNS server answers for every account, so these queries read across accounts: they serve the zone port,
// never an API request.

/** The served domains (active or pending cancellation) whose name is one of `names`, oldest first. */
export function findServedZones(db: Db, names: string[]): Promise<(ServedZone & { managed: number })[]> {
  if (names.length === 0) return Promise.resolve([])
  return db
    .selectFrom('domains')
    .select(['id', 'name', 'zone_serial as serial', 'nameservers as nameserversJson', 'managed_dns as managed'])
    .where('name', 'in', names)
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .orderBy('id')
    .execute()
}

/** One served domain by id, or undefined when it is gone or no longer served. */
export function findServedZoneById(db: Db, id: number): Promise<(ServedZone & { managed: number }) | undefined> {
  return db
    .selectFrom('domains')
    .select(['id', 'name', 'zone_serial as serial', 'nameservers as nameserversJson', 'managed_dns as managed'])
    .where('id', '=', id)
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .executeTakeFirst()
}

/** Every record of one domain, in insertion order, read a page at a time (a large zone does not hold the event loop). */
export async function listServedZoneRecords(db: Db, domainId: number) {
  const rows = await pagedRecords((after, limit) =>
    db
      .selectFrom('dns_records')
      .select(['id', 'type', 'name', 'value', 'ttl'])
      .where('domain_id', '=', domainId)
      .where('id', '>', after)
      .orderBy('id')
      .limit(limit)
      .execute(),
  )
  return rows.map(({ id: _, ...r }) => r)
}

/** The name of every served domain, oldest first. */
export async function listServedZoneNames(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('domains')
    .select('name')
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .orderBy('id')
    .execute()
  return rows.map((r) => r.name)
}

/** Every served domain (id and name), by id. */
export function listServedZones(db: Db): Promise<{ id: number; name: string }[]> {
  return db
    .selectFrom('domains')
    .select(['id', 'name'])
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .orderBy('id')
    .execute()
}

/** The catalog's serial and the digest of the zone set it was given for, when stored. */
export const findCatalog = (db: Db) =>
  db.selectFrom('dns_catalog').select(['serial', 'members_digest']).where('id', '=', 1).executeTakeFirst()

/**
 * The catalog's row, made with serial `first` when missing, and (on PostgreSQL) locked until the end of the
 * caller's transaction.
 */
export async function lockCatalog(trx: Db, first: number) {
  await trx
    .insertInto('dns_catalog')
    .values({ id: 1, serial: first, members_digest: '' })
    .onConflict((c) => c.column('id').doNothing())
    .execute()
  let locked = trx.selectFrom('dns_catalog').select(['serial', 'members_digest']).where('id', '=', 1)
  if (onPostgres(trx)) locked = locked.forUpdate()
  return locked.executeTakeFirstOrThrow()
}

/** Stores the catalog's serial for the zone set of `digest`. */
export async function updateCatalog(trx: Db, serial: number, digest: string): Promise<void> {
  await trx.updateTable('dns_catalog').set({ serial, members_digest: digest }).where('id', '=', 1).execute()
}
