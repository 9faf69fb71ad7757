import type { Insertable, Updateable } from 'kysely'
import type { Db } from '../../../db/database.js'
import type { NameserverProfilesTable } from '../domains.tables.js'

/** Nameserver profiles. Every function takes the account id. */

/** The account's nameserver profiles, oldest first. */
export const listProfiles = (db: Db, accountId: number) =>
  db.selectFrom('nameserver_profiles').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

/** One nameserver profile of the account by alias. */
export const findProfile = (db: Db, accountId: number, alias: string) =>
  db.selectFrom('nameserver_profiles').selectAll().where('account_id', '=', accountId).where('alias', '=', alias).executeTakeFirst()

/** The account's default nameserver profile, if it marked one. */
export const findDefaultProfile = (db: Db, accountId: number) =>
  db.selectFrom('nameserver_profiles').selectAll().where('account_id', '=', accountId).where('is_default', '=', 1).executeTakeFirst()

/** Stores a new nameserver profile. */
export const insertProfile = (db: Db, row: Insertable<NameserverProfilesTable>) =>
  db.insertInto('nameserver_profiles').values(row).returning('id').executeTakeFirstOrThrow()

/** Changes a nameserver profile of the account. */
export const updateProfile = (db: Db, accountId: number, id: number, changes: Updateable<NameserverProfilesTable>) =>
  db.updateTable('nameserver_profiles').set(changes).where('account_id', '=', accountId).where('id', '=', id).execute()

/** Unmarks the account's default nameserver profile. */
export const clearDefault = (db: Db, accountId: number) =>
  db.updateTable('nameserver_profiles').set({ is_default: 0 }).where('account_id', '=', accountId).execute()

/** Deletes a nameserver profile of the account. */
export const deleteProfile = (db: Db, accountId: number, id: number) =>
  db.deleteFrom('nameserver_profiles').where('account_id', '=', accountId).where('id', '=', id).execute()
