import type { AnyDb } from './helpers.js'
import { withId, withUserColumns } from './helpers.js'

export const kind = 'expand'

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('accounts'))
    .addColumn('customer_number', 'integer', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await withUserColumns(withId(db, db.schema.createTable('users')), true).execute()
  await db.schema.createIndex('users_account_idx').on('users').column('account_id').execute()

  await withId(db, db.schema.createTable('api_keys'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('expires_at', 'text')
    .addColumn('allowed_ips', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('last_used_at', 'text')
    .addColumn('last_used_ip', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('api_keys_account_idx').on('api_keys').column('account_id').execute()
  await db.schema.createIndex('api_keys_prefix_idx').on('api_keys').column('prefix').execute()

  await withId(db, db.schema.createTable('audit_log'))
    .addColumn('account_id', 'integer')
    .addColumn('user_id', 'integer')
    .addColumn('key_prefix', 'text')
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('audit_log_account_idx').on('audit_log').columns(['account_id', 'created_at']).execute()

  await withId(db, db.schema.createTable('jobs'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account_id', 'integer')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('result', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute()
  await db.schema.createIndex('jobs_due_idx').on('jobs').columns(['status', 'run_at']).execute()
}

export async function down(db: AnyDb): Promise<void> {
  for (const t of ['jobs', 'audit_log', 'api_keys', 'users', 'accounts']) await db.schema.dropTable(t).execute()
}
