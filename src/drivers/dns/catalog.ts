import { createHash } from 'node:crypto'
import type { ZoneCatalog } from './dns.js'
import type { WireRecord, ZoneSnapshot } from './authority.js'

/**
 * The SOA timers of the catalog zone: a secondary asks for its serial every 5 minutes (1 minute after a failure),
 * so a change that came without a NOTIFY (a zone inserted by another process) reaches it all the same.
 */
const CATALOG_SOA = { refresh: 300, retry: 60, expire: 1209600, minimum: 0, ttl: 0 }

/**
 * The member label of a zone in the catalog (RFC 9432 §4.1): stable while the domain exists, another for a new
 * domain of the same name (its id differs), so a secondary drops the old zone's data and transfers the new one.
 */
export function catalogMemberId(zone: { id: number; name: string }): string {
  return createHash('sha256').update(`${zone.id} ${zone.name}`).digest('hex').slice(0, 32)
}

/**
 * The catalog zone `name` (RFC 9432, schema version 2) as a snapshot to answer and transfer: its SOA and NS
 * (`invalid.`, as §4 asks), `version TXT "2"`, and `<id>.zones PTR <zone>` for every member.
 */
export function catalogSnapshot(name: string, catalog: ZoneCatalog): ZoneSnapshot {
  const soa = { ...CATALOG_SOA, mname: 'invalid.', rname: 'invalid.', serial: catalog.serial }
  const rrsets = new Map<string, Map<string, WireRecord[]>>()
  const names = new Set<string>([name])
  const add = (owner: string, rec: WireRecord) => {
    rrsets.set(owner, new Map([...(rrsets.get(owner) ?? new Map<string, WireRecord[]>()), [rec.type, [rec]]]))
    for (let n = owner; n.length > name.length; n = n.slice(n.indexOf('.') + 1)) names.add(n)
  }
  const soaData = { ...soa, mname: 'invalid', rname: 'invalid', serial: catalog.serial >>> 0 }
  add(name, { type: 'SOA', ttl: 0, data: soaData })
  add(name, { type: 'NS', ttl: 0, data: 'invalid' })
  add(`version.${name}`, { type: 'TXT', ttl: 0, data: [Buffer.from('2')] })
  for (const zone of catalog.zones) {
    add(`${catalogMemberId(zone)}.zones.${name}`, { type: 'PTR', ttl: 0, data: zone.name })
  }
  return { id: 0, name, serial: catalog.serial, nameserversJson: '', soa, rrsets, names, signer: null }
}
