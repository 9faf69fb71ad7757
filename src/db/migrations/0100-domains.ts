import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('domains'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_id', 'integer', (c) => c.notNull())
    .addColumn('renewal_date', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('nameservers', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('nameserver_profile', 'text')
    .addColumn('is_locked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dnssec_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dnssec_keys', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('forwarder', 'text')
    .addColumn('forwarder_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('managed_dns', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('contacts', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('cancel_at', 'text')
    .addColumn('zone_serial', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('domains_account_idx').on('domains').columns(['account_id', 'id']).execute()

  await withId(db, db.schema.createTable('dns_records'))
    .addColumn('domain_id', 'integer', (c) => c.notNull().references('domains.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('ttl', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('dns_records_domain_idx')
    .on('dns_records')
    .columns(['domain_id', 'name', 'type'])
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('dns_records').execute()
  await db.schema.dropTable('domains').execute()
}
