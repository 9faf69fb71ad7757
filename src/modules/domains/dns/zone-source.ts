import type { Db } from '../../../db/database.js'
import type { ServedZone, ZoneSource } from '../../../drivers/dns/dns.js'

/** The statuses of a domain whose zone is served. */
const SERVED_DOMAIN_STATUSES = ['active', 'pending_cancellation'] as const

// The DNS server answers for every account, so these queries read across accounts: they serve the zone port,
// never an API request.

/** The served domains (active or pending cancellation) whose name is one of `names`, oldest first. */
function findServedZones(db: Db, names: string[]): Promise<ServedZone[]> {
  if (names.length === 0) return Promise.resolve([])
  return db
    .selectFrom('domains')
    .select(['id', 'name', 'zone_serial as serial', 'nameservers as nameserversJson'])
    .where('name', 'in', names)
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .orderBy('id')
    .execute()
}

/** One served domain by id, or undefined when it is gone or no longer served. */
function findServedZoneById(db: Db, id: number): Promise<ServedZone | undefined> {
  return db
    .selectFrom('domains')
    .select(['id', 'name', 'zone_serial as serial', 'nameservers as nameserversJson'])
    .where('id', '=', id)
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .executeTakeFirst()
}

/** Every record of one domain, in insertion order. */
function listZoneRecords(db: Db, domainId: number) {
  return db
    .selectFrom('dns_records')
    .select(['type', 'name', 'value', 'ttl'])
    .where('domain_id', '=', domainId)
    .orderBy('id')
    .execute()
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

/** The zone port of the DNS driver, over the `domains` and `dns_records` tables. */
export function zoneSourceOf(db: Db): ZoneSource {
  return {
    servedZones: (names) => findServedZones(db, names),
    servedZone: (id) => findServedZoneById(db, id),
    zoneRecords: (zoneId) => listZoneRecords(db, zoneId),
    servedZoneNames: () => listServedZoneNames(db),
  }
}
