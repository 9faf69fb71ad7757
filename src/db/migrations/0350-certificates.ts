import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

const PRODUCTS = [
  {
    id: 1,
    name: 'hostapi SSL',
    kind: 'single',
    validation: 'DV',
    max_domains: 1,
    wildcard: 0,
    price_cents: 995,
    durations: '[1,2]',
    active: 1,
  },
  {
    id: 2,
    name: 'hostapi SSL Wildcard',
    kind: 'wildcard',
    validation: 'DV',
    max_domains: 2,
    wildcard: 1,
    price_cents: 4995,
    durations: '[1,2]',
    active: 1,
  },
  {
    id: 3,
    name: 'hostapi SSL Multi-domain',
    kind: 'multi_domain',
    validation: 'DV',
    max_domains: 10,
    wildcard: 0,
    price_cents: 2995,
    durations: '[1,2]',
    active: 1,
  },
]

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('certificate_products')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('validation', 'text', (c) => c.notNull())
    .addColumn('max_domains', 'integer', (c) => c.notNull())
    .addColumn('wildcard', 'integer', (c) => c.notNull())
    .addColumn('price_cents', 'integer', (c) => c.notNull())
    .addColumn('durations', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
  await db.insertInto('certificate_products').values(PRODUCTS).execute()

  await withId(db, db.schema.createTable('certificates'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('product_id', 'integer', (c) => c.notNull().references('certificate_products.id'))
    .addColumn('order_id', 'integer')
    .addColumn('order_item_id', 'integer', (c) => c.unique())
    .addColumn('duration', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('common_name', 'text')
    .addColumn('domains', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('csr', 'text')
    .addColumn('validation_method', 'text')
    .addColumn('approver_email', 'text')
    .addColumn('auto_setup_dns', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('challenge', 'text')
    .addColumn('dns_auto_setup', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('validation_checks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('certificate', 'text')
    .addColumn('intermediate_certificate', 'text')
    .addColumn('serial_number', 'text')
    .addColumn('valid_from', 'text')
    .addColumn('valid_until', 'text')
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addColumn('status_message', 'text')
    .addColumn('requested_at', 'text')
    .addColumn('issued_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('certificates_account_idx').on('certificates').columns(['account_id', 'id']).execute()

  await withId(db, db.schema.createTable('ca_authorities'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('root_cert', 'text', (c) => c.notNull())
    .addColumn('root_key', 'text', (c) => c.notNull())
    .addColumn('intermediate_cert', 'text', (c) => c.notNull())
    .addColumn('intermediate_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('ca_authorities').execute()
  await db.schema.dropTable('certificates').execute()
  await db.schema.dropTable('certificate_products').execute()
}
