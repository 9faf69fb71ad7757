import type { Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { PaymethodsTable } from './account.tables.js'

/** Stored payment methods of an account. */

export const listPaymethods = (db: Db, accountId: number) =>
  db.selectFrom('paymethods').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

export const findPaymethod = (db: Db, accountId: number, id: number) =>
  db.selectFrom('paymethods').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()

export const insertPaymethod = (db: Db, row: Insertable<PaymethodsTable>) =>
  db.insertInto('paymethods').values(row).returning('id').executeTakeFirstOrThrow()
