import type { AnyDb } from './helpers.js'

export const kind = 'expand'

// A VPS remembers the order item it was provisioned for, so a retried order job finds it instead of making another.
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('vps').addColumn('order_item_id', 'integer').execute()
  await db.schema.createIndex('vps_order_item_idx').on('vps').column('order_item_id').execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('vps_order_item_idx').execute()
  await db.schema.alterTable('vps').dropColumn('order_item_id').execute()
}
