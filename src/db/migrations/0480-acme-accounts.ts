import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

/**
 * The ACME account of the installation at each ACME server it used: its private key (sealed with the secret
 * key) and the account URL the server gave it. One row per directory URL, so two instances keep one account.
 */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('acme_accounts'))
    .addColumn('directory_url', 'text', (c) => c.notNull().unique())
    .addColumn('account_key', 'text', (c) => c.notNull())
    .addColumn('account_url', 'text')
    .addColumn('email', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('acme_accounts').execute()
}
