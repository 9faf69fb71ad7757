import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('orders'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('total_cents', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .execute()
  await db.schema.createIndex('orders_account_idx').on('orders').columns(['account_id', 'status']).execute()

  await withId(db, db.schema.createTable('order_items'))
    .addColumn('order_id', 'integer', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('price_cents', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('errors', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('result', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('order_items_order_idx').on('order_items').column('order_id').execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('order_items').execute()
  await db.schema.dropTable('orders').execute()
}
