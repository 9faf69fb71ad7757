import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('idempotency_keys'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('idem_key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('content_type', 'text')
    .addColumn('body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('idempotency_keys_account_key_uq', ['account_id', 'idem_key'])
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute()
}
