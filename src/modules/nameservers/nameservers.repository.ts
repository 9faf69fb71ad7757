import type { Insertable, Updateable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { NameserverProfilesTable } from '../domains/domains.tables.js'

/** Nameserver profiles. Every function takes the account id. */

export const listProfiles = (db: Db, accountId: number) =>
  db.selectFrom('nameserver_profiles').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

export const findProfile = (db: Db, accountId: number, alias: string) =>
  db.selectFrom('nameserver_profiles').selectAll().where('account_id', '=', accountId).where('alias', '=', alias).executeTakeFirst()

export const findDefaultProfile = (db: Db, accountId: number) =>
  db.selectFrom('nameserver_profiles').selectAll().where('account_id', '=', accountId).where('is_default', '=', 1).executeTakeFirst()

export const insertProfile = (db: Db, row: Insertable<NameserverProfilesTable>) =>
  db.insertInto('nameserver_profiles').values(row).returning('id').executeTakeFirstOrThrow()

export const updateProfile = (db: Db, accountId: number, id: number, changes: Updateable<NameserverProfilesTable>) =>
  db.updateTable('nameserver_profiles').set(changes).where('account_id', '=', accountId).where('id', '=', id).execute()

export const clearDefault = (db: Db, accountId: number) =>
  db.updateTable('nameserver_profiles').set({ is_default: 0 }).where('account_id', '=', accountId).execute()

export const deleteProfile = (db: Db, accountId: number, id: number) =>
  db.deleteFrom('nameserver_profiles').where('account_id', '=', accountId).where('id', '=', id).execute()
