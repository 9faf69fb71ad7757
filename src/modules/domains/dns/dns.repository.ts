import type { Db } from '../../../db/database.js'
import type { NormalisedRecord } from '../../../lib/dns/records.js'

/** DNS records of a domain. Every function takes the account id and the domain id; records of another account's domain are never touched. */

const ownedDomain = (db: Db, accountId: number, domainId: number) =>
  db.selectFrom('domains').select('id').where('account_id', '=', accountId).where('id', '=', domainId)

/** The records of one of the account's domains, in insertion order. */
export const listRecords = (db: Db, accountId: number, domainId: number) =>
  db
    .selectFrom('dns_records')
    .select(['id', 'type', 'name', 'value', 'ttl'])
    .where('domain_id', 'in', ownedDomain(db, accountId, domainId))
    .orderBy('id')
    .execute()

/** The records of one of the account's domains at one owner name (the record-set rules are per name). */
export const listRecordsAt = (db: Db, accountId: number, domainId: number, name: string) =>
  db
    .selectFrom('dns_records')
    .select(['id', 'type', 'name', 'value', 'ttl'])
    .where('domain_id', 'in', ownedDomain(db, accountId, domainId))
    .where('name', '=', name)
    .orderBy('id')
    .execute()

/** Adds records to a domain (its ownership checked by the caller in the same transaction). */
export async function insertRecords(db: Db, domainId: number, records: NormalisedRecord[], now: string): Promise<void> {
  if (records.length === 0) return
  // Chunked: a large zone import stays under the dialects' parameter limits. Between chunks the event loop gets
  // a turn: better-sqlite3 is synchronous, and 50,000 rows in one go would hold every other request for hundreds
  // of milliseconds. Safe inside a transaction: the connection stays with it, other queries wait for it to end.
  for (let i = 0; i < records.length; i += 500) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve))
    await db
      .insertInto('dns_records')
      .values(
        records.slice(i, i + 500).map((r) => ({
          domain_id: domainId,
          type: r.type,
          name: r.name,
          value: r.value,
          ttl: r.ttl,
          created_at: now,
        })),
      )
      .execute()
  }
}

/** Deletes every record of one of the account's domains. */
export const deleteAllRecords = (db: Db, accountId: number, domainId: number) =>
  db
    .deleteFrom('dns_records')
    .where('domain_id', 'in', ownedDomain(db, accountId, domainId))
    .execute()

/** Deletes the records of one (type, name), or only those with `value` when given; returns how many went. */
export async function deleteRecords(
  db: Db,
  accountId: number,
  domainId: number,
  type: string,
  name: string,
  value?: string,
): Promise<number> {
  let q = db
    .deleteFrom('dns_records')
    .where('domain_id', 'in', ownedDomain(db, accountId, domainId))
    .where('type', '=', type)
    .where('name', '=', name)
  if (value !== undefined) q = q.where('value', '=', value)
  const result = await q.executeTakeFirst()
  return Number(result.numDeletedRows)
}
