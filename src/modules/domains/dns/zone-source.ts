import { createHash } from 'node:crypto'
import type { Db } from '../../../db/database.js'
import type { ServedZone, ZoneCatalog, ZoneSource } from '../../../drivers/dns/dns.js'
import type { SecretBox } from '../../../lib/secret-box.js'
import { openZoneKey } from '../dnssec/zone-keys.js'
import { findZoneKeys } from '../dnssec/zone-keys.repository.js'
import * as repo from './zone-source.repository.js'

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
  const zones = await repo.listServedZones(db)
  const stored = await repo.findCatalog(db)
  if (stored?.members_digest === membersDigest(zones)) return { serial: Number(stored.serial), zones }
  return db.transaction().execute(async (trx) => {
    // The first serial: seconds since 1970, so a catalog made again (a new database) still rises on the secondaries.
    const row = await repo.lockCatalog(trx, Math.floor(Date.now() / 1000))
    const current = await repo.listServedZones(trx)
    const digest = membersDigest(current)
    if (row.members_digest === digest) return { serial: Number(row.serial), zones: current }
    const serial = Number(row.serial) + (row.members_digest === '' ? 0 : 1)
    await repo.updateCatalog(trx, serial, digest)
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
    servedZones: async (names) => withKeys(db, box, await repo.findServedZones(db, names)),
    servedZone: async (id) => {
      const zone = await repo.findServedZoneById(db, id)
      return zone && (await withKeys(db, box, [zone]))[0]
    },
    zoneRecords: (zoneId) => repo.listServedZoneRecords(db, zoneId),
    servedZoneNames: () => repo.listServedZoneNames(db),
    catalog: () => readCatalog(db),
  }
}
