import { sql } from 'kysely'
import type { Db } from '../../../db/database.js'
import { likeContains } from '../../../db/search.js'

/** Extension (TLD) prices: the provider's price list, the same for every account. */

/** One page of extensions by name, with the total count. */
export async function listExtensions(db: Db, opts: { search?: string; offset: number; limit: number }) {
  let q = db.selectFrom('tld_prices')
  if (opts.search) q = q.where(likeContains(sql.ref('extension'), opts.search))
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  const rows = await q.selectAll().orderBy('extension').offset(opts.offset).limit(opts.limit).execute()
  return { rows, total: Number(total.n) }
}

/** One extension by name (without the dot). */
export const findExtension = (db: Db, extension: string) =>
  db.selectFrom('tld_prices').selectAll().where('extension', '=', extension).executeTakeFirst()
