import type { Insertable, Updateable } from 'kysely'
import type { Db } from '../../../db/database.js'
import { jsonColumns } from '../../../db/json-columns.js'
import type { NameserverProfilesTable } from '../domains.tables.js'
import type { Nameserver } from './nameservers.js'

/** Nameserver profiles. Every function takes the account id; reads answer decoded rows. */

/** Decodes the nameservers of (part of) a nameserver profile row. */
export const decodeProfile = jsonColumns<{ nameservers: Nameserver[] }>('nameservers')

/** The account's nameserver profiles, oldest first. */
export const listProfiles = async (db: Db, accountId: number) =>
  (
    await db.selectFrom('nameserver_profiles').selectAll().where('account_id', '=', accountId).orderBy('id').execute()
  ).map(decodeProfile)

/** One nameserver profile of the account by alias. */
export const findProfile = async (db: Db, accountId: number, alias: string) => {
  const row = await db
    .selectFrom('nameserver_profiles')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('alias', '=', alias)
    .executeTakeFirst()
  return row && decodeProfile(row)
}

/** The account's default nameserver profile, if it marked one. */
export const findDefaultProfile = async (db: Db, accountId: number) => {
  const row = await db
    .selectFrom('nameserver_profiles')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('is_default', '=', 1)
    .executeTakeFirst()
  return row && decodeProfile(row)
}

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
