import { sql } from 'kysely'
import type { AuditEntry } from '../../../db/audit.repository.js'
import { compiledOnce } from '../../../db/compiled.js'
import { onPostgres, type Db } from '../../../db/database.js'
import type { NormalisedRecord } from '../../../lib/dns/records.js'
import { serialUpdate } from '../domains.repository.js'
import { nextTurn } from '../../../lib/turns.js'

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

/** Rows per statement of a zone-sized read. */
const PAGE = 500

/**
 * Every record of one of the account's domains, in insertion order, read a page at a time with the event loop
 * given a turn between pages: better-sqlite3 reads synchronously, and 50,000 records in one statement would hold
 * every other request. The pages may see a change committed between them: the caller checks the zone serial.
 */
export async function listZoneRecords(db: Db, accountId: number, domainId: number) {
  return pagedRecords((after, limit) => zonePage(db, undefined, [accountId, domainId, after, limit]))
}

const zonePage = compiledOnce(
  (db: Db, _shape: undefined, [accountId, domainId, after, limit]: [number, number, number, number]) =>
    db
      .selectFrom('dns_records')
      .select(['id', 'type', 'name', 'value', 'ttl'])
      // `=`, not `in`: with one domain the index (domain_id, id) gives the rows in order, with no sort.
      .where('domain_id', '=', ownedDomain(db, accountId, domainId))
      .where('id', '>', after)
      .orderBy('id')
      .limit(limit),
)

/** The rows `page` reads after an id, at most `limit` of them, from the first on: a turn of the event loop between pages. */
export async function pagedRecords<R extends { id: number }>(
  page: (after: number, limit: number) => Promise<R[]>,
): Promise<R[]> {
  const out: R[] = []
  for (let after = 0; ; ) {
    const rows = await page(after, PAGE)
    for (const r of rows) out.push(r)
    const last = rows.at(-1)
    if (rows.length < PAGE || last === undefined) return out
    after = last.id
    await nextTurn()
  }
}

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
    if (i > 0) await nextTurn()
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
export async function deleteAllRecords(db: Db, accountId: number, domainId: number): Promise<void> {
  // In pages, with a turn between them, for the reason insertRecords gives.
  for (let first = true; ; first = false) {
    if (!first) await nextTurn()
    const page = db
      .selectFrom('dns_records')
      .select('id')
      .where('domain_id', '=', ownedDomain(db, accountId, domainId))
      .orderBy('id')
      .limit(PAGE)
    const done = await db.deleteFrom('dns_records').where('id', 'in', page).executeTakeFirst()
    if (Number(done.numDeletedRows) < PAGE) return
  }
}

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

/**
 * In a transaction: the records of one of the account's domains at the owner name `name`, read once the domain's
 * row is locked (PostgreSQL; on SQLite the write transaction holds the whole database) until the transaction ends,
 * so no other writer of the zone changes the name meanwhile (dns_replace_record_set takes the same lock); undefined
 * when the account has no such domain.
 */
export async function lockedRecordsAt(trx: Db, accountId: number, domainId: number, name: string) {
  let zone = ownedDomain(trx, accountId, domainId)
  if (onPostgres(trx)) zone = zone.forNoKeyUpdate()
  if (!(await zone.executeTakeFirst())) return undefined
  return listRecordsAt(trx, accountId, domainId, name)
}

/** One of the account's domains, by name, with its records at the owner name `name`, in one statement. */
export async function zoneAt(db: Db, accountId: number, zone: string, name: string) {
  const rows = await db
    .selectFrom('domains as d')
    .leftJoin('dns_records as r', (j) => j.onRef('r.domain_id', '=', 'd.id').on('r.name', '=', name))
    .select(['d.id as domain_id', 'd.name as zone', 'r.id', 'r.type', 'r.name', 'r.value', 'r.ttl'])
    // Whether a webhook endpoint of the account may want the change's event: read here, not in another round trip.
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom('webhook_endpoints as w')
            .select('w.id')
            .whereRef('w.account_id', '=', 'd.account_id')
            .where('w.enabled', '=', 1),
        )
        .as('listened'),
    )
    .where('d.account_id', '=', accountId)
    .where('d.name', '=', zone)
    .orderBy('r.id')
    .execute()
  if (rows.length === 0) return undefined
  return {
    domain: { id: rows[0].domain_id, name: rows[0].zone },
    listened: Boolean(rows[0].listened),
    records: rows.flatMap((r) =>
      // A domain without records at the name is one row with the record's columns null.
      r.id === null || r.type === null || r.name === null || r.value === null || r.ttl === null
        ? []
        : [{ id: r.id, type: r.type, name: r.name, value: r.value, ttl: r.ttl }],
    ),
  }
}

/** The types at an owner name other than `type`, sorted, comma-separated: what a record there is checked against. */
export const otherTypes = (records: { type: string }[], type: string): string =>
  [...new Set(records.filter((r) => r.type !== type).map((r) => r.type))].sort().join(',')

/** A record-set write: when, the serial to raise the zone's to, and the other types at the name it was checked against. */
export interface RecordSetChange {
  now: string
  serial: number
  /** otherTypes of the records the record was checked against. */
  others: string
}

/**
 * The record set (type, name) of one of the account's domains becomes `record` and the zone serial is raised to
 * `change.serial` or past the stored one, only while the other types at the name are still `change.others`; false,
 * with nothing written, otherwise (or when the account has no such domain). In the caller's transaction; on
 * PostgreSQL the zone's row is locked first, so the check holds until the commit.
 */
export async function replaceRecordSetIn(
  trx: Db,
  accountId: number,
  domainId: number,
  record: NormalisedRecord,
  change: RecordSetChange,
): Promise<boolean> {
  const current = await lockedRecordsAt(trx, accountId, domainId, record.name)
  if (!current || otherTypes(current, record.type) !== change.others) return false
  await deleteRecords(trx, accountId, domainId, record.type, record.name)
  await insertRecords(trx, domainId, [record], change.now)
  await serialUpdate(trx, accountId, domainId, change.serial, change.now).execute()
  return true
}

/**
 * PostgreSQL: replaceRecordSetIn as one statement, a call of dns_replace_record_set (migration 0500), which holds
 * the zone's row lock only inside the database; `audit`, when given, is written by it too. Outside a transaction
 * the call commits on its own.
 */
export async function replaceRecordSetCall(
  db: Db,
  accountId: number,
  domainId: number,
  record: NormalisedRecord,
  change: RecordSetChange,
  audit: AuditEntry | null,
): Promise<boolean> {
  const { rows } = await sql<{ done: boolean }>`select dns_replace_record_set(${accountId}, ${domainId},
    ${record.type}, ${record.name}, ${record.value}, ${record.ttl}, ${change.now}, ${change.serial},
    ${change.others}, ${audit && JSON.stringify(audit)}::json) as done`.execute(db)
  return rows[0].done
}

/** A record-set write to the account's zone named `zone`, with the request's audit row to write with it (or null). */
export interface RecordSetWrite {
  accountId: number
  zone: string
  record: NormalisedRecord
  change: RecordSetChange
  audit: AuditEntry | null
}

/**
 * PostgreSQL: replaceRecordSetCall for the account's zone named `zone`, with no read before it: a call of
 * dns_replace_record_set_at (migration 0650), which writes nothing, and answers false, also when an enabled webhook
 * endpoint of the account listens (the change's event must commit with it). Outside a transaction: it commits on its own.
 */
export async function replaceRecordSetAtCall(db: Db, w: RecordSetWrite): Promise<boolean> {
  const { rows } = await sql<{ done: boolean }>`select dns_replace_record_set_at(${w.accountId}, ${w.zone},
    ${w.record.type}, ${w.record.name}, ${w.record.value}, ${w.record.ttl}, ${w.change.now}, ${w.change.serial},
    ${w.change.others}, ${w.audit && JSON.stringify(w.audit)}::json) as done`.execute(db)
  return rows[0].done
}

/**
 * PostgreSQL: replaceRecordSetAtCall for several writes, in their order, in one statement and one commit
 * (dns_replace_record_sets); the answers in the writes' order. All or nothing: an error writes none of them.
 */
export async function replaceRecordSetsAtCall(db: Db, writes: RecordSetWrite[]): Promise<boolean[]> {
  const changes = writes.map((w) => ({
    account: w.accountId,
    zone: w.zone,
    type: w.record.type,
    name: w.record.name,
    value: w.record.value,
    ttl: w.record.ttl,
    now: w.change.now,
    serial: w.change.serial,
    others: w.change.others,
    audit: w.audit,
  }))
  const { rows } = await sql<{
    done: boolean[]
  }>`select dns_replace_record_sets(${JSON.stringify(changes)}::json) as done`.execute(db)
  const answers = rows[0].done
  if (answers.length !== writes.length)
    throw new Error(`${writes.length} record-set writes got ${answers.length} answers`)
  return answers
}
