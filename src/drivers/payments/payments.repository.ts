import type { Insertable, Kysely } from 'kysely'
import type { PaymentTables, PaymentsTable } from './payments.tables.js'

/** The built-in payments driver's handle: its own tables alone. */
export type PaymentsDb = Kysely<PaymentTables>

/** Records a payment request. */
export const insertPayment = (db: PaymentsDb, row: Insertable<PaymentsTable>) =>
  db.insertInto('payments').values(row).execute()

/** The status of the payment `reference`, if there is one. */
export const statusOf = async (db: PaymentsDb, reference: string): Promise<string | undefined> =>
  (await db.selectFrom('payments').select('status').where('reference', '=', reference).executeTakeFirst())?.status

/** Marks the payment `reference` paid at `paidAt`. */
export const markPaid = (db: PaymentsDb, reference: string, paidAt: string) =>
  db.updateTable('payments').set({ status: 'paid', paid_at: paidAt }).where('reference', '=', reference).execute()
