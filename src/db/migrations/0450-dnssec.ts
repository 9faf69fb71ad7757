import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

/**
 * DNSSEC: the signing key of each zone hostapi serves with DNSSEC on (its private key sealed with the secret key),
 * and the keys the built-in registry publishes in the parent zone for each name.
 */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('dnssec_zone_keys'))
    .addColumn('domain_id', 'integer', (c) => c.notNull().unique().references('domains.id').onDelete('cascade'))
    .addColumn('algorithm', 'integer', (c) => c.notNull())
    .addColumn('flags', 'integer', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .alterTable('registry_domains')
    .addColumn('dnssec_keys', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('registry_domains').dropColumn('dnssec_keys').execute()
  await db.schema.dropTable('dnssec_zone_keys').execute()
}
