import type { Db } from '../../../db/database.js'
import type { AccountProfilesTable } from '../account.tables.js'
import type { Insertable, Updateable } from 'kysely'

/** The account profile row (one per account), created on first use. */

/** The account's stored profile, if any. */
export const findProfile = (db: Db, accountId: number) =>
  db.selectFrom('account_profiles').selectAll().where('account_id', '=', accountId).executeTakeFirst()

/** Stores the account's profile, or applies `changes` to the stored one (two first writes may race). */
export const upsertProfile = (
  db: Db,
  row: Insertable<AccountProfilesTable>,
  changes: Updateable<AccountProfilesTable>,
) =>
  db
    .insertInto('account_profiles')
    .values(row)
    .onConflict((oc) => oc.column('account_id').doUpdateSet(changes))
    .execute()

/** Changes the account's stored profile. */
export const updateProfile = (db: Db, accountId: number, changes: Updateable<AccountProfilesTable>) =>
  db.updateTable('account_profiles').set(changes).where('account_id', '=', accountId).execute()

/** The account's profile whose pending e-mail change has this token hash. */
export const findProfileByEmailToken = (db: Db, accountId: number, tokenHash: string) =>
  db
    .selectFrom('account_profiles')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('pending_email_token_hash', '=', tokenHash)
    .executeTakeFirst()

/** The account name and main user, from which a missing profile is made. */
export const profileSource = (db: Db, accountId: number) =>
  db
    .selectFrom('accounts as a')
    .innerJoin('users as u', (j) => j.onRef('u.account_id', '=', 'a.id').on('u.is_main_user', '=', 1))
    .select(['a.name', 'u.firstname', 'u.lastname', 'u.email'])
    .where('a.id', '=', accountId)
    .executeTakeFirst()
