import type { Db } from '../../db/database.js'

/** The stored check value named `name`, if any. */
export const findCheck = (db: Db, name: string) =>
  db.selectFrom('secret_key_checks').select(['name', 'value']).where('name', '=', name).executeTakeFirst()

/** Stores the check unless one is stored already (another instance may store it at the same moment). */
export const insertCheckIfAbsent = (db: Db, name: string, value: string, now: string) =>
  db
    .insertInto('secret_key_checks')
    .values({ name, value, updated_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()

/** Replaces the check value, if it is still `old`. */
export const replaceCheck = (db: Db, name: string, old: string, value: string, now: string) =>
  db
    .updateTable('secret_key_checks')
    .set({ value, updated_at: now })
    .where('name', '=', name)
    .where('value', '=', old)
    .execute()
