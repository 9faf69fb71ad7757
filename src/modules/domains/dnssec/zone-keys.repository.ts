import type { Insertable } from 'kysely'
import type { Db } from '../../../db/database.js'
import type { DnssecZoneKeysTable } from '../domains.tables.js'

/** The stored keys of the given domains, private keys still sealed. */
export function findZoneKeys(db: Db, domainIds: number[]) {
  if (domainIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('dnssec_zone_keys')
    .select(['id', 'domain_id', 'algorithm', 'flags', 'public_key', 'private_key'])
    .where('domain_id', 'in', domainIds)
    .execute()
}

/** Stores a domain's key unless it has one already (then nothing changes). */
export const insertZoneKeyIfAbsent = (db: Db, row: Insertable<DnssecZoneKeysTable>) =>
  db
    .insertInto('dnssec_zone_keys')
    .values(row)
    .onConflict((oc) => oc.column('domain_id').doNothing())
    .execute()

/** Deletes a domain's key, if it has one. */
export const deleteZoneKey = (db: Db, domainId: number) =>
  db.deleteFrom('dnssec_zone_keys').where('domain_id', '=', domainId).execute()
