import { sql } from 'kysely'
import { compiledOnce } from '../../../db/compiled.js'
import { onPostgres, type Db } from '../../../db/database.js'
import { jsonArray, jsonInteger, jsonItems, jsonObject, jsonString, jsonStringOf } from '../../../db/json-text.js'
import { RECORD_TYPES } from '../../../lib/dns/records.js'
import { asJsonText, type JsonText } from '../../../lib/json-text.js'

/**
 * `GET /domains/{domain}/dns` as one statement: the `data` of the answer, `{"domain":…,"records":[…]}`, built by
 * the database (src/db/json-text.ts), or undefined when the account holds no domain `zone`. The records come in the
 * order of sortRecords (src/lib/dns/zone-file.ts): owner names in DNS canonical order (the key of ownerOrderKey, src/lib/dns/owner-order.ts:
 * SQLite calls it, registered as `dns_owner_key`; PostgreSQL builds the same text, splitting only names more than
 * one label below the apex, compared byte by byte with the "C" collation, which is code point order: names are
 * stored as ASCII), then the type's place in RECORD_TYPES, then insertion order. A name is shown with its trailing dot.
 */
export async function zoneRecordsJson(db: Db, accountId: number, zone: string): Promise<JsonText | undefined> {
  const row = (await zoneJson(db, undefined, [accountId, zone])).at(0)
  return row && asJsonText(row.data)
}

const zoneJson = compiledOnce((db: Db, _shape: undefined, [accountId, zone]: [number, string]) => {
  const name = sql.ref('r.name')
  const apex = sql.ref('d.name')
  // Below the apex, as sortRecords cuts it; the common names (one label below it) without the split.
  const below = sql`left(${name}, greatest(length(${name}) - length(${apex}) - 1, 0))`
  const ownerKey = onPostgres(db)
    ? sql`(case when ${name} = ${apex} then ''
        when strpos(${below}, '.') = 0 then ${below} || chr(1)
        else (select string_agg(l || chr(1), '' order by o desc)
          from unnest(string_to_array(${below}, '.')) with ordinality as t(l, o)) end) collate "C"`
    : sql`dns_owner_key(${apex}, ${name})`
  const typeRank = sql`case ${sql.ref('r.type')} ${sql.join(
    RECORD_TYPES.map((t, i) => sql`when ${sql.lit(t)} then ${sql.lit(i)}`),
    sql` `,
  )} else ${sql.lit(RECORD_TYPES.length)} end`
  const record = jsonObject([
    ['type', jsonStringOf(db, sql.ref('r.type'), RECORD_TYPES)],
    ['name', jsonString(db, sql`case when ${name} like '%.' then ${name} else ${name} || '.' end`)],
    ['value', jsonString(db, sql.ref('r.value'))],
    ['ttl', jsonInteger(sql.ref('r.ttl'))],
  ])
  const records = sql`(select ${jsonItems(record, sql`${ownerKey}, ${typeRank}, ${sql.ref('r.id')}`)}
    from dns_records as r where r.domain_id = d.id)`
  return db
    .selectFrom('domains as d')
    .select(
      sql<string>`${jsonObject([
        ['domain', jsonString(db, sql.ref('d.name'))],
        ['records', jsonArray(records)],
      ])}`.as('data'),
    )
    .where('d.account_id', '=', accountId)
    .where('d.name', '=', zone)
})
