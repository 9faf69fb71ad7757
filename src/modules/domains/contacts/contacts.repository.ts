import type { Db } from '../../../db/database.js'

/** Contact profiles. Every function takes the account id. */

/** The account's contact profiles, oldest first. */
export const listContacts = (db: Db, accountId: number) =>
  db.selectFrom('contact_profiles').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

/** One contact profile of the account. */
export const findContact = (db: Db, accountId: number, id: number) =>
  db.selectFrom('contact_profiles').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()

/** Stores a new contact profile. */
export const insertContact = (db: Db, row: { account_id: number; name: string; profile: string; created_at: string }) =>
  db.insertInto('contact_profiles').values({ ...row, updated_at: row.created_at }).returning('id').executeTakeFirstOrThrow()

/** Changes a contact profile of the account. */
export const updateContact = (db: Db, accountId: number, id: number, changes: { name?: string; profile?: string; updated_at: string }) =>
  db.updateTable('contact_profiles').set(changes).where('account_id', '=', accountId).where('id', '=', id).execute()

/** Deletes a contact profile of the account. */
export const deleteContact = (db: Db, accountId: number, id: number) =>
  db.deleteFrom('contact_profiles').where('account_id', '=', accountId).where('id', '=', id).execute()
