import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

/** The built-in registry's own state: the names it has registered, their auth codes and expiry. */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('registry_domains'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('auth_code', 'text', (c) => c.notNull())
    .addColumn('expires_on', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('registry_domains').execute()
}
