import { createHash } from 'node:crypto'
import { onPostgres, type Db } from '../../../db/database.js'
import type { ServedZone, ZoneCatalog, ZoneSource } from '../../../drivers/dns/dns.js'
import type { SecretBox } from '../../../lib/secret-box.js'
import { findZoneKeys, openZoneKey } from '../dnssec/zone-keys.js'
import { pagedRecords } from './dns.repository.js'

/** The statuses of a domain whose zone is served. */
export const SERVED_DOMAIN_STATUSES = ['active', 'pending_cancellation'] as const

// The DNS server answers for every account, so these queries read across accounts: they serve the zone port,
// never an API request.

/** The served domains (active or pending cancellation) whose name is one of `names`, oldest first. */
function findServedZones(db: Db, names: string[]): Promise<(ServedZone & { managed: number })[]> {
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
function findServedZoneById(db: Db, id: number): Promise<(ServedZone & { managed: number }) | undefined> {
  return db
    .selectFrom('domains')
    .select(['id', 'name', 'zone_serial as serial', 'nameservers as nameserversJson', 'managed_dns as managed'])
    .where('id', '=', id)
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .executeTakeFirst()
}

/** Every record of one domain, in insertion order, read a page at a time (a large zone does not hold the event loop). */
async function listZoneRecords(db: Db, domainId: number) {
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
async function listServedZoneNames(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('domains')
    .select('name')
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .orderBy('id')
    .execute()
  return rows.map((r) => r.name)
}

/** Every served domain (id and name), by id. */
function listServedZones(db: Db): Promise<{ id: number; name: string }[]> {
  return db
    .selectFrom('domains')
    .select(['id', 'name'])
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .orderBy('id')
    .execute()
}

const membersDigest = (zones: { id: number; name: string }[]) =>
  createHash('sha256')
    .update(zones.map((z) => `${z.id} ${z.name}\n`).join(''))
    .digest('hex')

/**
 * The served zones and the catalog serial for them. The serial stored with the digest of the set it was given for
 * answers while the set is unchanged; a new set gets the next serial once: under the row's lock, from the set read
 * again under it, so two instances never give two serials to one set nor one serial to two.
 */
async function readCatalog(db: Db): Promise<ZoneCatalog> {
  const zones = await listServedZones(db)
  const stored = await db
    .selectFrom('dns_catalog')
    .select(['serial', 'members_digest'])
    .where('id', '=', 1)
    .executeTakeFirst()
  if (stored?.members_digest === membersDigest(zones)) return { serial: Number(stored.serial), zones }
  return db.transaction().execute(async (trx) => {
    // The first serial: seconds since 1970, so a catalog made again (a new database) still rises on the secondaries.
    const first = Math.floor(Date.now() / 1000)
    await trx
      .insertInto('dns_catalog')
      .values({ id: 1, serial: first, members_digest: '' })
      .onConflict((c) => c.column('id').doNothing())
      .execute()
    let locked = trx.selectFrom('dns_catalog').select(['serial', 'members_digest']).where('id', '=', 1)
    if (onPostgres(trx)) locked = locked.forUpdate()
    const row = await locked.executeTakeFirstOrThrow()
    const current = await listServedZones(trx)
    const digest = membersDigest(current)
    if (row.members_digest === digest) return { serial: Number(row.serial), zones: current }
    const serial = Number(row.serial) + (row.members_digest === '' ? 0 : 1)
    await trx.updateTable('dns_catalog').set({ serial, members_digest: digest }).where('id', '=', 1).execute()
    return { serial, zones: current }
  })
}

/**
 * The zones with their signing keys: a zone served with DNSSEC on (managed DNS and a key stored) gets its key, opened
 * with `box`; the others none.
 */
async function withKeys(db: Db, box: SecretBox, zones: (ServedZone & { managed: number })[]): Promise<ServedZone[]> {
  const managed = zones.filter((z) => z.managed === 1).map((z) => z.id)
  const keys = new Map((await findZoneKeys(db, managed)).map((k) => [k.domain_id, k]))
  return zones.map(({ managed: _, ...zone }) => {
    const key = keys.get(zone.id)
    return key ? { ...zone, dnssec: openZoneKey(box, key) } : zone
  })
}

/** The zone port of the DNS driver, over the `domains`, `dns_records` and `dnssec_zone_keys` tables. */
export function zoneSourceOf(db: Db, box: SecretBox): ZoneSource {
  return {
    servedZones: async (names) => withKeys(db, box, await findServedZones(db, names)),
    servedZone: async (id) => {
      const zone = await findServedZoneById(db, id)
      return zone && (await withKeys(db, box, [zone]))[0]
    },
    zoneRecords: (zoneId) => listZoneRecords(db, zoneId),
    servedZoneNames: () => listServedZoneNames(db),
    catalog: () => readCatalog(db),
  }
}
