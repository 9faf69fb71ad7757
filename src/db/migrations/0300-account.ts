import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('account_profiles'))
    .addColumn('account_id', 'integer', (c) => c.notNull().unique().references('accounts.id').onDelete('cascade'))
    .addColumn('firstname', 'text', (c) => c.notNull())
    .addColumn('lastname', 'text', (c) => c.notNull())
    .addColumn('company', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('address', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('house_number', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('zipcode', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('city', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('country_code', 'text', (c) => c.notNull().defaultTo('NL'))
    .addColumn('phone', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('phone_country_code', 'text', (c) => c.notNull().defaultTo('+31'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_invoices', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('company_vat_number', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('pending_email', 'text')
    .addColumn('pending_email_token_hash', 'text')
    .addColumn('pending_email_expires_at', 'text')
    .addColumn('default_paymethod_id', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()

  await withId(db, db.schema.createTable('paymethods'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('expires', 'text')
    .addColumn('driver_reference', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('paymethods_account_idx').on('paymethods').columns(['account_id', 'id']).execute()

  await withId(db, db.schema.createTable('invoices'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('invoice_nr', 'text', (c) => c.notNull().unique())
    .addColumn('order_id', 'integer')
    .addColumn('invoice_date', 'text', (c) => c.notNull())
    .addColumn('due_date', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('subtotal_cents', 'integer', (c) => c.notNull())
    .addColumn('vat_rate_bp', 'integer', (c) => c.notNull())
    .addColumn('vat_cents', 'integer', (c) => c.notNull())
    .addColumn('total_cents', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('paid_at', 'text')
    .addColumn('payment_reference', 'text')
    .addColumn('payment_url', 'text')
    .addColumn('customer', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('invoices_account_idx').on('invoices').columns(['account_id', 'invoice_date']).execute()

  await withId(db, db.schema.createTable('invoice_lines'))
    .addColumn('invoice_id', 'integer', (c) => c.notNull().references('invoices.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('unit_price_cents', 'integer', (c) => c.notNull())
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('invoice_lines_invoice_idx')
    .on('invoice_lines')
    .columns(['invoice_id', 'position'])
    .execute()

  await withId(db, db.schema.createTable('tickets'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('ticket_number', 'integer', (c) => c.notNull().unique())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('department', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('creator', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('last_updated', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('tickets_account_idx').on('tickets').columns(['account_id', 'last_updated']).execute()

  await withId(db, db.schema.createTable('ticket_messages'))
    .addColumn('ticket_id', 'integer', (c) => c.notNull().references('tickets.id').onDelete('cascade'))
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('author', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('ticket_messages_ticket_idx').on('ticket_messages').columns(['ticket_id', 'id']).execute()

  await withId(db, db.schema.createTable('affiliate_payments'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('affiliate_payments_account_idx')
    .on('affiliate_payments')
    .columns(['account_id', 'date'])
    .execute()

  await withId(db, db.schema.createTable('affiliate_commissions'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('order_nr', 'integer', (c) => c.notNull())
    .addColumn('sub_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('sale_amount_cents', 'integer', (c) => c.notNull())
    .addColumn('commission_amount_cents', 'integer', (c) => c.notNull())
    .addColumn('approved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejection_reason', 'text')
    .addColumn('paidout', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('payment_id', 'integer', (c) => c.references('affiliate_payments.id').onDelete('set null'))
    .execute()
  await db.schema
    .createIndex('affiliate_commissions_account_idx')
    .on('affiliate_commissions')
    .columns(['account_id', 'date'])
    .execute()

  await withId(db, db.schema.createTable('payments'))
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'integer', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('paid_at', 'text')
    .execute()

  await withId(db, db.schema.createTable('outbox'))
    .addColumn('account_id', 'integer', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('outbox_created_idx').on('outbox').column('created_at').execute()
}

export async function down(db: AnyDb): Promise<void> {
  for (const t of [
    'outbox',
    'payments',
    'affiliate_commissions',
    'affiliate_payments',
    'ticket_messages',
    'tickets',
    'invoice_lines',
    'invoices',
    'paymethods',
    'account_profiles',
  ]) {
    await db.schema.dropTable(t).execute()
  }
}
