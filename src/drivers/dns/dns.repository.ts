import type { Db } from '../../db/database.js'
import { SERVED_DOMAIN_STATUSES } from './dns.js'

/** The domain row fields the DNS server needs. */
export interface ServedZoneRow {
  id: number
  name: string
  zone_serial: number
  nameservers: string
}

/** The served domains (active or pending cancellation) whose name is one of `names`, oldest first. */
export function findServedZones(db: Db, names: string[]): Promise<ServedZoneRow[]> {
  if (names.length === 0) return Promise.resolve([])
  return db
    .selectFrom('domains')
    .select(['id', 'name', 'zone_serial', 'nameservers'])
    .where('name', 'in', names)
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .orderBy('id')
    .execute()
}

/** One served domain by id, or undefined when it is gone or no longer served. */
export function findServedZoneById(db: Db, id: number): Promise<ServedZoneRow | undefined> {
  return db
    .selectFrom('domains')
    .select(['id', 'name', 'zone_serial', 'nameservers'])
    .where('id', '=', id)
    .where('status', 'in', [...SERVED_DOMAIN_STATUSES])
    .executeTakeFirst()
}

/** Every record of one domain, in insertion order. */
export function listZoneRecords(db: Db, domainId: number) {
  return db
    .selectFrom('dns_records')
    .select(['type', 'name', 'value', 'ttl'])
    .where('domain_id', '=', domainId)
    .orderBy('id')
    .execute()
}
