import { sql, type RawBuilder } from 'kysely'

/** `text` inside a LIKE pattern with `\` as the escape character: its `%`, `_` and `\` match themselves. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/** Longer searches match nothing: the columns searched are names, subjects and paths, and SQLite refuses LIKE patterns over 50 000 bytes. */
export const MAX_SEARCH_BYTES = 10_000

/**
 * True where the lower-cased SQL expression `expr` contains `search` (lower-cased here), the same on SQLite
 * and PostgreSQL; `%`, `_` and `\` in the search are literal. Stored text never holds NUL (PostgreSQL cannot
 * store it and the API refuses it), so a search with one matches nothing instead of reaching the database;
 * so does one over MAX_SEARCH_BYTES (the API takes at most 255 characters).
 */
export function likeContains(expr: RawBuilder<unknown>, search: string): RawBuilder<boolean> {
  if (search.includes('\0') || Buffer.byteLength(search) > MAX_SEARCH_BYTES) return sql<boolean>`1 = 0`
  return sql<boolean>`${expr} like ${`%${escapeLike(search.toLowerCase())}%`} escape '\\'`
}
