import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/** The invoice an affiliate payment settles (the affiliate's own or a self-billing one), when the operator names it. */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('affiliate_payments').addColumn('invoice_nr', 'text').execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('affiliate_payments').dropColumn('invoice_nr').execute()
}
