import type { Insertable } from 'kysely'
import type { Db } from '../../../db/database.js'
import type { PaymethodsTable } from '../account.tables.js'

/** Stored payment methods of an account. */

/** The account's payment methods, oldest first. */
export const listPaymethods = (db: Db, accountId: number) =>
  db.selectFrom('paymethods').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

/** One payment method of the account. */
export const findPaymethod = (db: Db, accountId: number, id: number) =>
  db.selectFrom('paymethods').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()

/** Stores a payment method; returns its id. */
export const insertPaymethod = (db: Db, row: Insertable<PaymethodsTable>) =>
  db.insertInto('paymethods').values(row).returning('id').executeTakeFirstOrThrow()
