import { sql, type RawBuilder } from 'kysely'
import { onPostgres, type Db } from './database.js'

/**
 * Reads answered as one JSON text built by the database, the same SQL on SQLite and PostgreSQL: an object is a
 * concatenation of its keys and its values' JSON texts (PostgreSQL's json_build_object and json_agg put spaces
 * and line breaks between the parts, which the answers do not have), a list is `string_agg` of its items in the
 * order of the answer. The text reaches the route as one string column: the driver decodes no row object and no
 * JSON, and the route sends it as it is. Strings are quoted by the database's own JSON quoting (`to_json` on
 * PostgreSQL, `json_quote` on SQLite), which escapes what JSON.stringify escapes in the same way (`"`, `\`, the
 * control characters, `\b\f\n\r\t` short, the others as `\u00xx` lower case); test/json-reads.test.ts compares the
 * texts with the route's serializer over generated data on both databases. This file runs no query.
 */

type Expr = RawBuilder<unknown>

/** A text expression as a JSON string, `null` when it is null. */
export const jsonString = (db: Db, expr: Expr): Expr =>
  onPostgres(db) ? sql`coalesce(to_json(${expr})::text, 'null')` : sql`coalesce(json_quote(${expr}), 'null')`

/**
 * A text expression that holds one of `values` as a JSON string: each of them as a literal (no per-row call of the
 * database's JSON quoting, which on PostgreSQL looks up how to convert the type on every call), any other value as
 * jsonString quotes it.
 */
export const jsonStringOf = (db: Db, expr: Expr, values: readonly string[]): Expr =>
  sql`case ${expr} ${sql.join(
    values.map((v) => sql`when ${sql.lit(v)} then ${sql.lit(JSON.stringify(v))}`),
    sql` `,
  )} else ${jsonString(db, expr)} end`

/** An integer expression as a JSON number, `null` when it is null. */
export const jsonInteger = (expr: Expr): Expr => sql`coalesce(cast(${expr} as text), 'null')`

/** A column holding JSON text (written by JSON.stringify), taken as it is. */
export const jsonRaw = (expr: Expr): Expr => expr

/** `{"key":value,…}` from JSON-text expressions, keys in the order given. */
export function jsonObject(fields: [key: string, value: Expr][]): Expr {
  const parts: Expr[] = []
  fields.forEach(([key, value], i) => {
    parts.push(sql.lit(`${i === 0 ? '{' : ','}${JSON.stringify(key)}:`), value)
  })
  parts.push(sql.lit('}'))
  return sql`(${sql.join(parts, sql` || `)})`
}

/** The items' JSON texts joined by commas in `orderBy` order (an aggregate; null over no rows). */
export const jsonItems = (item: Expr, orderBy: Expr): Expr => sql`string_agg(${item}, ',' order by ${orderBy})`

/** `[items]` from the result of jsonItems (an aggregate's value, or a subquery's), `[]` when it is null. */
export const jsonArray = (items: Expr): Expr => sql`('[' || coalesce(${items}, '') || ']')`

/**
 * jsonItems over the rows of a paged list, numbered `n` by `row_number()` in the list's order: those of `window`
 * (all without one), in that order. With count(*) beside it, one statement answers a page and its pagination.
 */
export const jsonWindow = (item: Expr, n: Expr, window: { offset: unknown; limit: unknown } | null): Expr =>
  window
    ? sql`${jsonItems(item, n)} filter (where ${n} > ${window.offset} and ${n} - ${window.offset} <= ${window.limit})`
    : jsonItems(item, n)
