import { sql, type RawBuilder } from 'kysely'

/** `%`, `_` and `\` in a search are literal. */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`)

/** Case-insensitive substring match of `search` in a column (integers are matched on their digits); the same on SQLite and PostgreSQL. */
export function contains(column: string, search: string, opts: { integer?: boolean } = {}): RawBuilder<boolean> {
  const pattern = `%${escapeLike(search.toLowerCase())}%`
  const col = opts.integer ? sql`cast(${sql.ref(column)} as text)` : sql`lower(${sql.ref(column)})`
  return sql<boolean>`${col} like ${pattern} escape '\\'`
}
