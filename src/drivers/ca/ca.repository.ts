import type { Db } from '../../db/database.js'
import type { CaAuthority } from './ca.tables.js'

/** The stored CA named `name`, if any. */
export const findAuthority = (db: Db, name: string): Promise<CaAuthority | undefined> =>
  db.selectFrom('ca_authorities').selectAll().where('name', '=', name).executeTakeFirst()

/** Stores a new CA; a unique violation means another instance stored one first. */
export const insertAuthority = (db: Db, row: Omit<CaAuthority, 'id'>) =>
  db.insertInto('ca_authorities').values(row).execute()

/** Every stored CA (the start-up check and the key rotation go through all of them). */
export const listAuthorities = (db: Db): Promise<CaAuthority[]> =>
  db.selectFrom('ca_authorities').selectAll().orderBy('id').execute()

/** Replaces the stored private keys of `row` with `keys`, if they are still what `row` holds; returns 1 when replaced. */
export async function replaceKeys(
  db: Db,
  row: CaAuthority,
  keys: Partial<Pick<CaAuthority, 'root_key' | 'intermediate_key'>>,
): Promise<number> {
  const r = await db
    .updateTable('ca_authorities')
    .set(keys)
    .where('id', '=', row.id)
    .where('root_key', '=', row.root_key)
    .where('intermediate_key', '=', row.intermediate_key)
    .executeTakeFirst()
  return Number(r.numUpdatedRows)
}
