import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/** A known value sealed with the secret key, so a start with another key fails before anything is served. */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('secret_key_checks')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('secret_key_checks').execute()
}
