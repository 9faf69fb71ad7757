import type { Db } from '../../../db/database.js'
import { contains } from '../../../db/search.js'

/** Users of an account (the table is the foundation's; these are the account area's queries). */

const searchable = (db: Db, accountId: number, search: string | undefined) => {
  let q = db.selectFrom('users').where('account_id', '=', accountId)
  if (search) {
    q = q.where((eb) =>
      eb.or([contains('username', search), contains('firstname', search), contains('lastname', search)]),
    )
  }
  return q
}

/** How many users of the account match `search`. */
export const countUsers = async (db: Db, accountId: number, search?: string): Promise<number> => {
  const row = await searchable(db, accountId, search)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The main user first, then by id. */
export const listUsers = (db: Db, accountId: number, opts: { search?: string; limit: number; offset: number }) =>
  searchable(db, accountId, opts.search)
    .selectAll()
    .orderBy('is_main_user', 'desc')
    .orderBy('id')
    .limit(opts.limit)
    .offset(opts.offset)
    .execute()

/** Sub-users of the account created since `since` (only those with an id up to `upToId`, when given). */
export const countSubUsersCreatedSince = async (
  db: Db,
  accountId: number,
  since: string,
  upToId?: number,
): Promise<number> => {
  let q = db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .where('is_main_user', '=', 0)
    .where('created_at', '>=', since)
  if (upToId !== undefined) q = q.where('id', '<=', upToId)
  const row = await q.executeTakeFirstOrThrow()
  return Number(row.n)
}

/** True when the account has a user with this username (usernames are unique per account). */
export const usernameTaken = async (db: Db, accountId: number, username: string): Promise<boolean> =>
  (await db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accountId)
    .where('username', '=', username)
    .executeTakeFirst()) !== undefined

/** Removes a user of the account. */
export const deleteUser = (db: Db, accountId: number, userId: number) =>
  db.deleteFrom('users').where('account_id', '=', accountId).where('id', '=', userId).execute()

/** The oldest creation time among the account's sub-users made since `since`. */
export const oldestSubUserSince = async (db: Db, accountId: number, since: string): Promise<string | null> => {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.min('created_at').as('t'))
    .where('account_id', '=', accountId)
    .where('is_main_user', '=', 0)
    .where('created_at', '>=', since)
    .executeTakeFirst()
  return (row?.t as string | null | undefined) ?? null
}

/** Changes names or permissions of a user of the account. */
export const updateUser = (
  db: Db,
  accountId: number,
  userId: number,
  changes: { firstname?: string; lastname?: string; permissions?: string },
) => db.updateTable('users').set(changes).where('account_id', '=', accountId).where('id', '=', userId).execute()
