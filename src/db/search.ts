import { sql, type RawBuilder } from 'kysely'
import { likeContains } from './like.js'

/** Case-insensitive substring match of `search` in a column (integers are matched on their digits); the same on SQLite and PostgreSQL. */
export function contains(column: string, search: string, opts: { integer?: boolean } = {}): RawBuilder<boolean> {
  const col = opts.integer ? sql`cast(${sql.ref(column)} as text)` : sql`lower(${sql.ref(column)})`
  return likeContains(col, search)
}
