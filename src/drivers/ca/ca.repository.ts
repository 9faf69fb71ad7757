import type { Kysely } from 'kysely'
import type { AcmeAccount, CaAuthority, CaTables } from './ca.tables.js'

/** The CA drivers' handle: their own tables alone. */
export type CaDb = Kysely<CaTables>

/** The stored CA named `name`, if any. */
export const findAuthority = (db: CaDb, name: string): Promise<CaAuthority | undefined> =>
  db.selectFrom('ca_authorities').selectAll().where('name', '=', name).executeTakeFirst()

/** Stores a new CA; a unique violation means another instance stored one first. */
export const insertAuthority = (db: CaDb, row: Omit<CaAuthority, 'id'>) =>
  db.insertInto('ca_authorities').values(row).execute()

/** The installation's ACME account at `directoryUrl`, if one was made. */
export const findAcmeAccount = (db: CaDb, directoryUrl: string): Promise<AcmeAccount | undefined> =>
  db.selectFrom('acme_accounts').selectAll().where('directory_url', '=', directoryUrl).executeTakeFirst()

/** Stores a new ACME account key; a unique violation means another instance stored one first. */
export const insertAcmeAccount = (db: CaDb, row: Omit<AcmeAccount, 'id'>) =>
  db.insertInto('acme_accounts').values(row).execute()

/** Records the account URL the ACME server gave the account. */
export const setAcmeAccountUrl = (db: CaDb, id: number, accountUrl: string) =>
  db.updateTable('acme_accounts').set({ account_url: accountUrl }).where('id', '=', id).execute()
/** Clears the registration of the account at `directoryUrl` (and, given one, replaces its sealed key). */
export const forgetAcmeAccount = (db: CaDb, directoryUrl: string, accountKey: string | null) =>
  db
    .updateTable('acme_accounts')
    .set({ account_url: null, ...(accountKey === null ? {} : { account_key: accountKey }) })
    .where('directory_url', '=', directoryUrl)
    .execute()
