import { sql, type RawBuilder } from 'kysely'

/** `text` inside a LIKE pattern with `\` as the escape character: its `%`, `_` and `\` match themselves. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Longer searches match nothing: the columns searched are names, subjects and paths, and SQLite refuses LIKE
 * patterns over 50 000 bytes.
 */
export const MAX_SEARCH_BYTES = 10_000

/**
 * Stored text never holds NUL (PostgreSQL cannot store it and the API refuses it), so a text with one matches
 * nothing instead of reaching the database; so does one over MAX_SEARCH_BYTES (the API takes at most 255 characters).
 */
function like(expr: RawBuilder<unknown>, text: string, pattern: (escaped: string) => string): RawBuilder<boolean> {
  const p = likePattern(text, pattern)
  return p === null ? sql<boolean>`1 = 0` : matches(expr, p)
}

const likePattern = (text: string, pattern: (escaped: string) => string): string | null =>
  text.includes('\0') || Buffer.byteLength(text) > MAX_SEARCH_BYTES ? null : pattern(escapeLike(text))

/** True where the SQL expression `expr` matches the LIKE `pattern` (a value: `\` escapes in it). */
export const matches = (expr: RawBuilder<unknown>, pattern: unknown): RawBuilder<boolean> =>
  sql<boolean>`${expr} like ${pattern} escape '\\'`

/**
 * The pattern with which `lower(column)` matches as likeContains matches it, for a statement compiled once (which
 * takes the pattern as a value, src/db/compiled.ts); null when the search matches nothing.
 */
export const containsPattern = (search: string): string | null => likePattern(search.toLowerCase(), (s) => `%${s}%`)

/**
 * True where the lower-cased SQL expression `expr` contains `search` (lower-cased here), the same on SQLite
 * and PostgreSQL; `%`, `_` and `\` in the search are literal; NUL or an over-long search matches nothing.
 */
export function likeContains(expr: RawBuilder<unknown>, search: string): RawBuilder<boolean> {
  const p = containsPattern(search)
  return p === null ? sql<boolean>`1 = 0` : matches(expr, p)
}

/** True where the SQL expression `expr` ends with `suffix`, taken as it is; `%`, `_` and `\` in it are literal. */
export function likeEndsWith(expr: RawBuilder<unknown>, suffix: string): RawBuilder<boolean> {
  return like(expr, suffix, (s) => `%${s}`)
}

/**
 * Case-insensitive substring match of `search` in a column (integers are matched on their digits); the same on
 * SQLite and PostgreSQL.
 */
export function contains(column: string, search: string, opts: { integer?: boolean } = {}): RawBuilder<boolean> {
  const col = opts.integer ? sql`cast(${sql.ref(column)} as text)` : sql`lower(${sql.ref(column)})`
  return likeContains(col, search)
}
