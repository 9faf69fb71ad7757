import type { Db } from '../../db/database.js'
import type { CaAuthority } from './ca.tables.js'

/** The stored CA named `name`, if any. */
export const findAuthority = (db: Db, name: string): Promise<CaAuthority | undefined> =>
  db.selectFrom('ca_authorities').selectAll().where('name', '=', name).executeTakeFirst()

/** Stores a new CA; a unique violation means another instance stored one first. */
export const insertAuthority = (db: Db, row: Omit<CaAuthority, 'id'>) =>
  db.insertInto('ca_authorities').values(row).execute()
