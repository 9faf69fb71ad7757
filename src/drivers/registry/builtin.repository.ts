import type { Kysely, Selectable } from 'kysely'
import type { RegistryDomainsTable, RegistryTables } from './builtin.tables.js'

/** The built-in registry's handle: its own tables alone. */
export type RegistryDb = Kysely<RegistryTables>

/** A registration the built-in registry holds. */
export type RegistryDomain = Selectable<RegistryDomainsTable>

/** Whether `name` is on the reserved list. */
export const isReserved = async (db: RegistryDb, name: string): Promise<boolean> =>
  (await db.selectFrom('reserved_names').select('id').where('name', '=', name).executeTakeFirst()) !== undefined

/** The premium prices of `name`, if it has them. */
export const premiumOf = (db: RegistryDb, name: string) =>
  db.selectFrom('premium_names').select(['register_cents', 'renew_cents']).where('name', '=', name).executeTakeFirst()

/** The registration of `name`, if the registry holds it. */
export const findRegistration = (db: RegistryDb, name: string): Promise<RegistryDomain | undefined> =>
  db.selectFrom('registry_domains').selectAll().where('name', '=', name).executeTakeFirst()

/** The expiry day of the registration of `name` that the request `requestId` made, if it made one. */
export const expiryMadeBy = async (db: RegistryDb, name: string, requestId: string): Promise<string | undefined> =>
  (
    await db
      .selectFrom('registry_domains')
      .select('expires_on')
      .where('name', '=', name)
      .where('request_id', '=', requestId)
      .executeTakeFirst()
  )?.expires_on

/** Records a registration; a name held already throws the unique violation (the caller maps it). */
export const insertRegistration = (
  db: RegistryDb,
  row: { name: string; authCode: string; expiresOn: string; requestId: string | null; now: string },
) =>
  db
    .insertInto('registry_domains')
    .values({
      name: row.name,
      auth_code: row.authCode,
      expires_on: row.expiresOn,
      request_id: row.requestId,
      created_at: row.now,
      updated_at: row.now,
    })
    .execute()

/** Records a registration unless the name is held already (then nothing changes). */
export const insertRegistrationIfAbsent = (
  db: RegistryDb,
  row: { name: string; authCode: string; expiresOn: string; now: string },
) =>
  db
    .insertInto('registry_domains')
    .values({
      name: row.name,
      auth_code: row.authCode,
      expires_on: row.expiresOn,
      created_at: row.now,
      updated_at: row.now,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()

/** Sets the expiry day of a registration. */
export const setExpiry = (db: RegistryDb, name: string, expiresOn: string, now: string) =>
  db.updateTable('registry_domains').set({ expires_on: expiresOn, updated_at: now }).where('name', '=', name).execute()

/** Sets the DNSSEC keys (JSON) a registration publishes. */
export const setDnssecKeys = (db: RegistryDb, name: string, keysJson: string, now: string) =>
  db.updateTable('registry_domains').set({ dnssec_keys: keysJson, updated_at: now }).where('name', '=', name).execute()

/** The DNSSEC keys (JSON) of a registration, if the registry holds it. */
export const dnssecKeysOf = async (db: RegistryDb, name: string): Promise<string | undefined> =>
  (await db.selectFrom('registry_domains').select('dnssec_keys').where('name', '=', name).executeTakeFirst())
    ?.dnssec_keys

/** Ends a registration. */
export const deleteRegistration = (db: RegistryDb, name: string) =>
  db.deleteFrom('registry_domains').where('name', '=', name).execute()
