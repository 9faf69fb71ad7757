import { CompiledQuery } from 'kysely'
import type { Db } from '../../db/database.js'
import type { ApiKeyUpdate, NewApiKey, NewUser } from '../../db/tables.js'
import { jsonColumns, type Decoded } from '../../db/json-columns.js'

/** Accounts, users and API keys. Every read of account data takes the account id; key reads answer decoded rows. */

/** The JSON columns of an API key row, decoded. */
export interface ApiKeyJson {
  allowed_ips: string[]
}

/** Decodes the whitelist of (part of) an API key row. */
export const decodeKey = jsonColumns<ApiKeyJson>('allowed_ips')

export const insertAccount = (db: Db, row: { customer_number: number; name: string; created_at: string }) =>
  db
    .insertInto('accounts')
    .values({ ...row, status: 'active' })
    .returning(['id', 'customer_number'])
    .executeTakeFirstOrThrow()

/** The customer number of an account (sandbox fault injection matches work by it), or null when it is gone. */
export const customerNumberOf = async (db: Db, accountId: number): Promise<number | null> =>
  (await db.selectFrom('accounts').select('customer_number').where('id', '=', accountId).executeTakeFirst())
    ?.customer_number ?? null

export const maxCustomerNumber = async (db: Db): Promise<number | null> => {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.max('customer_number').as('max'))
    .executeTakeFirst()
  return row?.max == null ? null : Number(row.max)
}

export const findAccount = (db: Db, accountId: number) =>
  db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst()

export const findAccountByCustomerNumber = (db: Db, customerNumber: number) =>
  db.selectFrom('accounts').selectAll().where('customer_number', '=', customerNumber).executeTakeFirst()

/** The first `limit` accounts by id. */
export const firstAccounts = (db: Db, limit: number) =>
  db.selectFrom('accounts').select(['id', 'customer_number']).orderBy('id').limit(limit).execute()

export const countAccounts = async (db: Db): Promise<number> => {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export const insertUser = (db: Db, row: NewUser) =>
  db.insertInto('users').values(row).returning('id').executeTakeFirstOrThrow()

export const findUser = (db: Db, accountId: number, userId: number) =>
  db.selectFrom('users').selectAll().where('account_id', '=', accountId).where('id', '=', userId).executeTakeFirst()

export const findMainUser = (db: Db, accountId: number) =>
  db
    .selectFrom('users')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('is_main_user', '=', 1)
    .executeTakeFirst()

/** The main user of any account with this username (the operator's check that owner addresses stay apart). */
export const findMainUserByUsername = (db: Db, username: string) =>
  db
    .selectFrom('users')
    .select(['id', 'account_id'])
    .where('username', '=', username)
    .where('is_main_user', '=', 1)
    .executeTakeFirst()

export const findUserById = (db: Db, userId: number) =>
  db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst()

export const insertKey = (db: Db, row: NewApiKey) =>
  db.insertInto('api_keys').values(row).returning('id').executeTakeFirstOrThrow()

const authQuery = (db: Db, keyHash: string) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .leftJoin('account_versions as v', 'v.account_id', 'k.account_id')
    .select([
      'k.id as key_id',
      'k.prefix',
      'k.expires_at',
      'k.allowed_ips',
      'k.revoked_at',
      'k.last_used_at',
      'u.id as user_id',
      'u.is_main_user',
      'u.permissions',
      'a.id as account_id',
      'a.customer_number',
      'a.status as account_status',
      'v.version as data_version',
    ])
    .where('k.key_hash', '=', keyHash)

type AuthRow = NonNullable<Awaited<ReturnType<ReturnType<typeof authQuery>['executeTakeFirst']>>>
const compiledAuth = new WeakMap<Db, string>()

/**
 * The authentication lookup: one indexed query on the key hash, with the user and account it belongs to and the
 * account's data version (PostgreSQL; see Database.accountVersion).
 * It runs on every request, so its SQL is built once per database handle and only the parameter changes.
 */
export async function findKeyForAuth(db: Db, keyHash: string): Promise<Decoded<AuthRow, ApiKeyJson> | undefined> {
  let text = compiledAuth.get(db)
  if (text === undefined) {
    text = authQuery(db, keyHash).compile().sql
    compiledAuth.set(db, text)
  }
  const result = await db.executeQuery<AuthRow>(CompiledQuery.raw(text, [keyHash]))
  return result.rows[0] && decodeKey(result.rows[0])
}

export const listKeys = async (db: Db, accountId: number) =>
  (
    await db
      .selectFrom('api_keys')
      .select([
        'id',
        'user_id',
        'prefix',
        'label',
        'expires_at',
        'allowed_ips',
        'last_used_at',
        'last_used_ip',
        'revoked_at',
        'created_at',
      ])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute()
  ).map(decodeKey)

export const findKeysByPrefix = (db: Db, prefix: string) =>
  db.selectFrom('api_keys').select(['id', 'account_id', 'prefix', 'revoked_at']).where('prefix', '=', prefix).execute()

export const updateKey = (db: Db, accountId: number, keyId: number, changes: ApiKeyUpdate) =>
  db.updateTable('api_keys').set(changes).where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst()

export const touchKey = (db: Db, keyId: number, at: string, ip: string) =>
  db.updateTable('api_keys').set({ last_used_at: at, last_used_ip: ip }).where('id', '=', keyId).execute()
