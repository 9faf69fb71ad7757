import type { Db } from '../../db/database.js'
import type { AcmeAccount, CaAuthority } from './ca.tables.js'

/** The stored CA named `name`, if any. */
export const findAuthority = (db: Db, name: string): Promise<CaAuthority | undefined> =>
  db.selectFrom('ca_authorities').selectAll().where('name', '=', name).executeTakeFirst()

/** Stores a new CA; a unique violation means another instance stored one first. */
export const insertAuthority = (db: Db, row: Omit<CaAuthority, 'id'>) =>
  db.insertInto('ca_authorities').values(row).execute()

/** The installation's ACME account at `directoryUrl`, if one was made. */
export const findAcmeAccount = (db: Db, directoryUrl: string): Promise<AcmeAccount | undefined> =>
  db.selectFrom('acme_accounts').selectAll().where('directory_url', '=', directoryUrl).executeTakeFirst()

/** Stores a new ACME account key; a unique violation means another instance stored one first. */
export const insertAcmeAccount = (db: Db, row: Omit<AcmeAccount, 'id'>) =>
  db.insertInto('acme_accounts').values(row).execute()

/** Records the account URL the ACME server gave the account. */
export const setAcmeAccountUrl = (db: Db, id: number, accountUrl: string) =>
  db.updateTable('acme_accounts').set({ account_url: accountUrl }).where('id', '=', id).execute()
/** Clears the registration of the account at `directoryUrl` (and, given one, replaces its sealed key). */
export const forgetAcmeAccount = (db: Db, directoryUrl: string, accountKey: string | null) =>
  db
    .updateTable('acme_accounts')
    .set({ account_url: null, ...(accountKey === null ? {} : { account_key: accountKey }) })
    .where('directory_url', '=', directoryUrl)
    .execute()
