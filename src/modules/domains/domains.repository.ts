import { sql, type Insertable, type Updateable } from 'kysely'
import { onPostgres, type Db } from '../../db/database.js'
import { jsonArray, jsonInteger, jsonObject, jsonRaw, jsonString, jsonWindow } from '../../db/json-text.js'
import { asJsonText, type JsonText } from '../../lib/json-text.js'
import { containsPattern, likeEndsWith, matches } from '../../db/search.js'
import { compiledOnce } from '../../db/compiled.js'
import { jsonColumns, type Decoded } from '../../db/json-columns.js'
import type { DomainRow, DomainsTable } from './domains.tables.js'
import type { Role } from './contacts/contacts.types.js'
import type { Nameserver } from './nameservers/nameservers.js'
import type { DnssecKey } from './dnssec/dnssec-input.js'

/** Domains. Every read of account data takes the account id; reads answer decoded rows. */

/** The JSON columns of a domain row, decoded. */
export interface DomainJson {
  tags: string[]
  nameservers: Nameserver[]
  dnssec_keys: DnssecKey[]
  forwarder: { type: number; url: string } | null
  contacts: Partial<Record<Role, number>>
}

/** A domain row with its JSON columns decoded. */
export type Domain = Decoded<DomainRow, DomainJson>

/** Decodes the JSON columns of (part of) a domain row. */
export const decodeDomain = jsonColumns<DomainJson>('tags', 'nameservers', 'dnssec_keys', 'forwarder', 'contacts')

/**
 * The `domains` list of `GET /domains` as JSON text built by the database (src/db/json-text.ts), in one statement:
 * the account's domains by id, those whose name contains `search` and that have any of `tags` (when given), the
 * page `window` of them (all without one), and how many there are in all (for the pagination). `tags` is stored as
 * the JSON text JSON.stringify wrote and goes into the answer as it is. Only the list's columns are read: DNS
 * clients read the whole list often.
 */
export async function listDomainsJson(
  db: Db,
  accountId: number,
  opts: { search?: string; tags: string[]; window: { offset: number; limit: number } | null },
): Promise<{ total: number; items: JsonText }> {
  const pattern = opts.search ? containsPattern(opts.search) : undefined
  const shape = {
    search: pattern === undefined ? 0 : pattern === null ? -1 : 1,
    tags: opts.tags.length,
    window: !!opts.window,
  }
  const values: (string | number)[] = [accountId]
  if (pattern) values.push(pattern)
  values.push(...opts.tags)
  if (opts.window) values.push(opts.window.offset, opts.window.limit)
  const [row] = await domainList(db, shape, values)
  return { total: Number(row.total), items: asJsonText(row.items) }
}

/** listDomainsJson's statement: `search` 1 with a pattern, -1 matching nothing, 0 without; `tags` how many. */
const domainList = compiledOnce(
  (db: Db, shape: { search: number; tags: number; window: boolean }, values: (string | number)[]) => {
    const next = values.values()
    const value = () => next.next().value
    let q = db
      .selectFrom('domains')
      .select([
        'id',
        'name',
        'renewal_date',
        'status',
        'status_id',
        'tags',
        sql<number>`row_number() over (order by id)`.as('n'),
      ])
      .where('account_id', '=', value() as number)
    if (shape.search === 1) q = q.where(matches(sql.ref('name'), value()))
    if (shape.search === -1) q = q.where(sql<boolean>`1 = 0`)
    if (shape.tags) {
      const elements = onPostgres(db)
        ? sql`json_array_elements_text(tags::json) as t(value)`
        : sql`json_each(tags) as t`
      const tags = Array.from({ length: shape.tags }, value)
      q = q.where(sql<boolean>`exists (select 1 from ${elements} where t.value in (${sql.join(tags)}))`)
    }
    const item = jsonObject([
      ['id', jsonInteger(sql.ref('m.id'))],
      ['domain', jsonString(db, sql.ref('m.name'))],
      ['renewal_date', jsonString(db, sql.ref('m.renewal_date'))],
      ['status', jsonString(db, sql.ref('m.status'))],
      ['status_id', jsonInteger(sql.ref('m.status_id'))],
      ['tags', jsonRaw(sql.ref('m.tags'))],
    ])
    const items = jsonWindow(item, sql.ref('m.n'), shape.window ? { offset: value(), limit: value() } : null)
    return db
      .selectFrom(q.as('m'))
      .select([sql<string | number>`count(*)`.as('total'), sql<string>`${jsonArray(items)}`.as('items')])
  },
)

/** The domain `name` when the account holds it. */
export const findOwned = async (db: Db, accountId: number, name: string) => {
  const row = (await ownedDomain(db, undefined, [accountId, name])).at(0)
  return row && decodeDomain(row)
}

const ownedDomain = compiledOnce((db: Db, _shape: undefined, [accountId, name]: [number, string]) =>
  db.selectFrom('domains').selectAll().where('account_id', '=', accountId).where('name', '=', name),
)

/** The account's newest domain. */
export const latestDomain = (db: Db, accountId: number) =>
  db
    .selectFrom('domains')
    .select(['name', 'status', 'status_id', 'renewal_date'])
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()

/** A domain by id alone: only for jobs, which carry the id they were given. */
/** The renewal day of the domain named `name` in any account, or null when there is none (the registry's port). */
export const renewalDateOf = async (db: Db, name: string): Promise<string | null> =>
  (await db.selectFrom('domains').select('renewal_date').where('name', '=', name).executeTakeFirst())?.renewal_date ??
  null

export const findById = async (db: Db, id: number) => {
  const row = await db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst()
  return row && decodeDomain(row)
}

/** Stores a new domain. */
export const insertDomain = (db: Db, row: Insertable<DomainsTable>) =>
  db.insertInto('domains').values(row).returning('id').executeTakeFirstOrThrow()

/** Changes one of the account's domains. */
export const updateDomain = (db: Db, accountId: number, id: number, changes: Updateable<DomainsTable>) =>
  db.updateTable('domains').set(changes).where('account_id', '=', accountId).where('id', '=', id).execute()

/** Deletes a domain and (by cascade) its records: only for the job that ends it. */
export const deleteDomain = (db: Db, id: number) => db.deleteFrom('domains').where('id', '=', id).execute()

/** Domains of the account whose nameservers come from the profile `alias`. */
export const domainsUsingProfile = (db: Db, accountId: number, alias: string) =>
  db
    .selectFrom('domains')
    .select(['id', 'name', 'zone_serial'])
    .where('account_id', '=', accountId)
    .where('nameserver_profile', '=', alias)
    .execute()

/** The contacts JSON of every domain of the account (to see whether a contact profile is in use). */
export const contactsOfDomains = async (db: Db, accountId: number) =>
  (await db.selectFrom('domains').select(['id', 'contacts']).where('account_id', '=', accountId).execute()).map(
    decodeDomain,
  )

/**
 * Raises the zone serial to `serial` or to the stored one plus one, whichever is higher, in one statement,
 * so two changes at once still give two serials.
 */
export const bumpSerial = (db: Db, accountId: number, id: number, serial: number, now: string) =>
  serialUpdate(db, accountId, id, serial, now).execute()

/** The statement of bumpSerial, unexecuted: a part of a larger statement. */
export const serialUpdate = (db: Db, accountId: number, id: number, serial: number, now: string) =>
  db
    .updateTable('domains')
    .set({
      zone_serial: sql<number>`case when zone_serial + 1 > ${serial} then zone_serial + 1 else ${serial} end`,
      updated_at: now,
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)

/**
 * Domains of any account whose zone overlaps `name`: the name itself, one of its ancestors (`example.nl`
 * and `nl` for `shop.example.nl`) or a name below it. Deliberately across accounts: a name is one account's
 * at most, and no account may hold a zone inside or around another's. Every row counts, whatever its status.
 */
export const findOverlapping = (db: Db, name: string) => {
  const labels = name.split('.')
  const atOrAbove = labels.map((_, i) => labels.slice(i).join('.'))
  return db
    .selectFrom('domains')
    .select(['id', 'account_id', 'name'])
    .where((eb) => eb.or([eb('name', 'in', atOrAbove), likeEndsWith(sql.ref('name'), `.${name}`)]))
    .orderBy('id')
    .execute()
}
