import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('contact_profiles'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('profile', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('contact_profiles_account_idx')
    .on('contact_profiles')
    .columns(['account_id', 'id'])
    .execute()

  await withId(db, db.schema.createTable('nameserver_profiles'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('alias', 'text', (c) => c.notNull())
    .addColumn('nameservers', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('nameserver_profiles_alias_uq', ['account_id', 'alias'])
    .execute()

  await withId(db, db.schema.createTable('dns_templates'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('alias', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('records', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('dns_templates_account_idx').on('dns_templates').columns(['account_id', 'id']).execute()
}

export async function down(db: AnyDb): Promise<void> {
  for (const t of ['dns_templates', 'nameserver_profiles', 'contact_profiles']) await db.schema.dropTable(t).execute()
}
