import type { Db } from '../../db/database.js'

/** Contact profiles. Every function takes the account id. */

export const listContacts = (db: Db, accountId: number) =>
  db.selectFrom('contact_profiles').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

export const findContact = (db: Db, accountId: number, id: number) =>
  db.selectFrom('contact_profiles').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()

export const insertContact = (db: Db, row: { account_id: number; name: string; profile: string; created_at: string }) =>
  db.insertInto('contact_profiles').values({ ...row, updated_at: row.created_at }).returning('id').executeTakeFirstOrThrow()

export const updateContact = (db: Db, accountId: number, id: number, changes: { name?: string; profile?: string; updated_at: string }) =>
  db.updateTable('contact_profiles').set(changes).where('account_id', '=', accountId).where('id', '=', id).execute()

export const deleteContact = (db: Db, accountId: number, id: number) =>
  db.deleteFrom('contact_profiles').where('account_id', '=', accountId).where('id', '=', id).execute()
