import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

/** Admin tokens: the operator's credential for `/admin/v1`, stored only as a hash like API keys. */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('admin_tokens'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('admin_tokens').execute()
}
