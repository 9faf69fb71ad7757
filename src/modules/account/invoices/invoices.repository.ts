import type { Insertable, Updateable } from 'kysely'
import type { Db } from '../../../db/database.js'
import type { InvoiceLinesTable, InvoiceRow, InvoicesTable } from '../account.tables.js'
import { contains } from '../../../db/search.js'
import { jsonColumns, type Decoded } from '../../../db/json-columns.js'
import type { InvoiceCustomer } from './invoices.types.js'

/** Invoices and their lines. Every read takes the account id; invoice reads answer decoded rows. */

/** The JSON columns of an invoice row, decoded. */
export interface InvoiceJson {
  customer: InvoiceCustomer
}

/** An invoice with its customer decoded. */
export type Invoice = Decoded<InvoiceRow, InvoiceJson>

/** Decodes the customer of (part of) an invoice row. */
export const decodeInvoice = jsonColumns<InvoiceJson>('customer')

/** Inserts an invoice; returns its id. */
export const insertInvoice = (db: Db, row: Insertable<InvoicesTable>) =>
  db.insertInto('invoices').values(row).returning('id').executeTakeFirstOrThrow()

/** Inserts the lines of an invoice. */
export const insertLines = (db: Db, rows: Insertable<InvoiceLinesTable>[]) =>
  db.insertInto('invoice_lines').values(rows).execute()

/** Changes an invoice of the account. */
export const updateInvoice = (db: Db, accountId: number, id: number, changes: Updateable<InvoicesTable>) =>
  db.updateTable('invoices').set(changes).where('account_id', '=', accountId).where('id', '=', id).execute()

const searchable = (db: Db, accountId: number, search: string | undefined) => {
  let q = db.selectFrom('invoices').where('account_id', '=', accountId)
  if (search) q = q.where(contains('invoice_nr', search))
  return q
}

/** How many of the account's invoices match `search`. */
export const countInvoices = async (db: Db, accountId: number, search?: string): Promise<number> => {
  const row = await searchable(db, accountId, search)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Newest first. */
export const listInvoices = async (
  db: Db,
  accountId: number,
  opts: { search?: string; limit: number; offset: number },
): Promise<Invoice[]> =>
  (
    await searchable(db, accountId, opts.search)
      .selectAll()
      .orderBy('invoice_date', 'desc')
      .orderBy('id', 'desc')
      .limit(opts.limit)
      .offset(opts.offset)
      .execute()
  ).map(decodeInvoice)

/** The id of the account's newest invoice (in `status`, when given). */
export const latestInvoiceId = async (db: Db, accountId: number, status?: string) => {
  let q = db.selectFrom('invoices').select('id').where('account_id', '=', accountId)
  if (status) q = q.where('status', '=', status)
  return (await q.orderBy('id', 'desc').limit(1).executeTakeFirst())?.id
}

/** One invoice of the account by its number, or by its id or number in digits when `id` is given. */
export const findInvoice = async (db: Db, accountId: number, invoiceNr: string, id?: number) => {
  const row = await db
    .selectFrom('invoices')
    .selectAll()
    .where('account_id', '=', accountId)
    .where((eb) =>
      id === undefined
        ? eb('invoice_nr', '=', invoiceNr)
        : eb.or([eb('id', '=', id), eb('invoice_nr', '=', invoiceNr)]),
    )
    .orderBy('id')
    .executeTakeFirst()
  return row && decodeInvoice(row)
}

/** Open invoices of every account that have a payment with the driver, after `afterId` by id (the reconciliation job's batch). */
export const openInvoicesWithPayment = (db: Db, afterId: number, limit: number) =>
  db
    .selectFrom('invoices')
    .select(['id', 'account_id', 'invoice_nr', 'payment_reference'])
    .where('status', '=', 'open')
    .where('payment_reference', 'is not', null)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute()

/** The lines of one of the account's invoices, in order. */
export const linesOf = (db: Db, accountId: number, invoiceId: number) =>
  db
    .selectFrom('invoice_lines as l')
    .innerJoin('invoices as i', 'i.id', 'l.invoice_id')
    .selectAll('l')
    .where('i.account_id', '=', accountId)
    .where('l.invoice_id', '=', invoiceId)
    .orderBy('l.position')
    .execute()

/** Cancels the open invoices of an order (nothing of them is due any more); paid ones stay as they are. */
export const cancelOpenOfOrder = (db: Db, accountId: number, orderId: number) =>
  db
    .updateTable('invoices')
    .set({ status: 'cancelled', payment_url: null })
    .where('account_id', '=', accountId)
    .where('order_id', '=', orderId)
    .where('status', '=', 'open')
    .execute()

/** The invoices of an order, oldest first. */
export const invoicesOfOrder = async (db: Db, accountId: number, orderId: number) =>
  (
    await db
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute()
  ).map(decodeInvoice)
