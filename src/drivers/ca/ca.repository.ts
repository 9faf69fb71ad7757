import type { Db } from '../../db/database.js'
import type { AcmeAccount, CaAuthority } from './ca.tables.js'

/** The stored CA named `name`, if any. */
export const findAuthority = (db: Db, name: string): Promise<CaAuthority | undefined> =>
  db.selectFrom('ca_authorities').selectAll().where('name', '=', name).executeTakeFirst()

/** Stores a new CA; a unique violation means another instance stored one first. */
export const insertAuthority = (db: Db, row: Omit<CaAuthority, 'id'>) =>
  db.insertInto('ca_authorities').values(row).execute()

/** Every stored CA (the start-up check and the key rotation go through all of them). */
export const listAuthorities = (db: Db): Promise<CaAuthority[]> =>
  db.selectFrom('ca_authorities').selectAll().orderBy('id').execute()

/** Replaces the stored private keys of `row` with `keys`, if they are still what `row` holds; returns 1 when replaced. */
export async function replaceKeys(
  db: Db,
  row: CaAuthority,
  keys: Partial<Pick<CaAuthority, 'root_key' | 'intermediate_key'>>,
): Promise<number> {
  const r = await db
    .updateTable('ca_authorities')
    .set(keys)
    .where('id', '=', row.id)
    .where('root_key', '=', row.root_key)
    .where('intermediate_key', '=', row.intermediate_key)
    .executeTakeFirst()
  return Number(r.numUpdatedRows)
}

/** The installation's ACME account at `directoryUrl`, if one was made. */
export const findAcmeAccount = (db: Db, directoryUrl: string): Promise<AcmeAccount | undefined> =>
  db.selectFrom('acme_accounts').selectAll().where('directory_url', '=', directoryUrl).executeTakeFirst()

/** Stores a new ACME account key; a unique violation means another instance stored one first. */
export const insertAcmeAccount = (db: Db, row: Omit<AcmeAccount, 'id'>) =>
  db.insertInto('acme_accounts').values(row).execute()

/** Records the account URL the ACME server gave the account. */
export const setAcmeAccountUrl = (db: Db, id: number, accountUrl: string) =>
  db.updateTable('acme_accounts').set({ account_url: accountUrl }).where('id', '=', id).execute()

/** Every stored ACME account (the key rotation goes through all of them). */
export const listAcmeAccounts = (db: Db): Promise<AcmeAccount[]> =>
  db.selectFrom('acme_accounts').selectAll().orderBy('id').execute()

/** Replaces the sealed key of `row`, if it still holds what `row` holds; returns 1 when replaced. */
export async function replaceAcmeKey(db: Db, row: AcmeAccount, accountKey: string): Promise<number> {
  const r = await db
    .updateTable('acme_accounts')
    .set({ account_key: accountKey })
    .where('id', '=', row.id)
    .where('account_key', '=', row.account_key)
    .executeTakeFirst()
  return Number(r.numUpdatedRows)
}

/** Clears the registration of the account at `directoryUrl` (and, given one, replaces its sealed key). */
export const forgetAcmeAccount = (db: Db, directoryUrl: string, accountKey: string | null) =>
  db
    .updateTable('acme_accounts')
    .set({ account_url: null, ...(accountKey === null ? {} : { account_key: accountKey }) })
    .where('directory_url', '=', directoryUrl)
    .execute()
