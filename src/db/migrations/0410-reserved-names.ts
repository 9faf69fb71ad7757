import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

/** Names the built-in registry refuses to register (kept by the registry or by the provider), set by the operator. */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('reserved_names'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('reason', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('reserved_names').execute()
}
