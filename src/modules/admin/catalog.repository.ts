import type { Db } from '../../db/database.js'
import type { TldPrice } from '../domains/domains.tables.js'

/** The provider's catalogue as the operator edits it: extension prices and the built-in registry's premium names. */

/** One extension's price list as the operator sets it. */
export type TldRow = Omit<TldPrice, 'id'>

export const findTld = (db: Db, extension: string) =>
  db.selectFrom('tld_prices').selectAll().where('extension', '=', extension).executeTakeFirst()

/** Inserts or replaces the price row of an extension. */
export async function upsertTld(db: Db, row: TldRow): Promise<void> {
  const { extension, ...changes } = row
  const updated = await db.updateTable('tld_prices').set(changes).where('extension', '=', extension).executeTakeFirst()
  if (Number(updated.numUpdatedRows) === 0) await db.insertInto('tld_prices').values(row).execute()
}

export const deleteTld = async (db: Db, extension: string): Promise<boolean> =>
  Number((await db.deleteFrom('tld_prices').where('extension', '=', extension).executeTakeFirst()).numDeletedRows) > 0

export const listPremium = (db: Db) =>
  db.selectFrom('premium_names').select(['name', 'register_cents', 'renew_cents']).orderBy('name').execute()

export async function upsertPremium(
  db: Db,
  row: { name: string; register_cents: number; renew_cents: number },
): Promise<void> {
  const updated = await db
    .updateTable('premium_names')
    .set({ register_cents: row.register_cents, renew_cents: row.renew_cents })
    .where('name', '=', row.name)
    .executeTakeFirst()
  if (Number(updated.numUpdatedRows) === 0) await db.insertInto('premium_names').values(row).execute()
}

export const deletePremium = async (db: Db, name: string): Promise<boolean> =>
  Number((await db.deleteFrom('premium_names').where('name', '=', name).executeTakeFirst()).numDeletedRows) > 0

export const listReserved = (db: Db) =>
  db.selectFrom('reserved_names').select(['name', 'reason', 'created_at']).orderBy('name').execute()

export async function upsertReserved(db: Db, row: { name: string; reason: string; created_at: string }): Promise<void> {
  const updated = await db
    .updateTable('reserved_names')
    .set({ reason: row.reason })
    .where('name', '=', row.name)
    .executeTakeFirst()
  if (Number(updated.numUpdatedRows) === 0) await db.insertInto('reserved_names').values(row).execute()
}

export const deleteReserved = async (db: Db, name: string): Promise<boolean> =>
  Number((await db.deleteFrom('reserved_names').where('name', '=', name).executeTakeFirst()).numDeletedRows) > 0
