import type { Insertable, Updateable } from 'kysely'
import type { Db } from '../../db/database.js'
import { contains } from '../../db/search.js'
import type { AffiliateCommissionsTable, AffiliatePaymentsTable } from './affiliate.tables.js'

/** Affiliate commissions and payments. Every read takes the account id. */

/** Inserts a commission; returns its id. */
export const insertCommission = (db: Db, row: Insertable<AffiliateCommissionsTable>) =>
  db.insertInto('affiliate_commissions').values(row).returning('id').executeTakeFirstOrThrow()

/** Changes a commission of the account. */
export const updateCommission = (
  db: Db,
  accountId: number,
  id: number,
  changes: Updateable<AffiliateCommissionsTable>,
) =>
  db
    .updateTable('affiliate_commissions')
    .set(changes)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute()

/** One commission of the account. */
export const findCommission = (db: Db, accountId: number, id: number) =>
  db
    .selectFrom('affiliate_commissions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()

const commissionsMatching = (db: Db, accountId: number, search: string | undefined) => {
  let q = db.selectFrom('affiliate_commissions').where('account_id', '=', accountId)
  if (search) q = q.where((eb) => eb.or([contains('order_nr', search, { integer: true }), contains('sub_id', search)]))
  return q
}

/** How many of the account's commissions match `search`. */
export const countCommissions = async (db: Db, accountId: number, search?: string): Promise<number> => {
  const row = await commissionsMatching(db, accountId, search)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Newest first. */
export const listCommissions = (db: Db, accountId: number, opts: { search?: string; limit: number; offset: number }) =>
  commissionsMatching(db, accountId, opts.search)
    .selectAll()
    .orderBy('date', 'desc')
    .orderBy('id', 'desc')
    .limit(opts.limit)
    .offset(opts.offset)
    .execute()

/** The commissions one affiliate payment of the account paid. */
export const commissionsOfPayment = (db: Db, accountId: number, paymentId: number) =>
  db
    .selectFrom('affiliate_commissions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('payment_id', '=', paymentId)
    .orderBy('id')
    .execute()

/** Approved commissions not paid out yet. */
export const payableCommissions = (db: Db, accountId: number) =>
  db
    .selectFrom('affiliate_commissions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('approved', '=', 1)
    .where('paidout', '=', 0)
    .orderBy('id')
    .execute()

/** Marks the commissions paid by `paymentId`, only those still unpaid; returns how many it marked. */
export const claimForPayment = async (db: Db, accountId: number, ids: number[], paymentId: number): Promise<number> => {
  const r = await db
    .updateTable('affiliate_commissions')
    .set({ paidout: 1, payment_id: paymentId })
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .where('paidout', '=', 0)
    .executeTakeFirst()
  return Number(r.numUpdatedRows)
}

/** Inserts an affiliate payment; returns its id. */
export const insertPayment = (db: Db, row: Insertable<AffiliatePaymentsTable>) =>
  db.insertInto('affiliate_payments').values(row).returning('id').executeTakeFirstOrThrow()

/** One affiliate payment of the account. */
export const findPayment = (db: Db, accountId: number, id: number) =>
  db
    .selectFrom('affiliate_payments')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()

const paymentsMatching = (db: Db, accountId: number, search: string | undefined) => {
  let q = db.selectFrom('affiliate_payments').where('account_id', '=', accountId)
  if (search)
    q = q.where((eb) =>
      eb.or([contains('reference', search), contains('invoice_nr', search), contains('id', search, { integer: true })]),
    )
  return q
}

/** How many of the account's affiliate payments match `search`. */
export const countPayments = async (db: Db, accountId: number, search?: string): Promise<number> => {
  const row = await paymentsMatching(db, accountId, search)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Newest first, with the number of commissions each pays. */
export const listPayments = (db: Db, accountId: number, opts: { search?: string; limit: number; offset: number }) =>
  paymentsMatching(db, accountId, opts.search)
    .selectAll('affiliate_payments')
    .select((eb) =>
      eb
        .selectFrom('affiliate_commissions as c')
        .select((e) => e.fn.countAll().as('n'))
        .whereRef('c.payment_id', '=', 'affiliate_payments.id')
        .as('commission_count'),
    )
    .orderBy('date', 'desc')
    .orderBy('id', 'desc')
    .limit(opts.limit)
    .offset(opts.offset)
    .execute()
