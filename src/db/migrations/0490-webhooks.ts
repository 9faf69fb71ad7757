import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

/**
 * Webhooks: the endpoints of an account (secret sealed at rest, the previous one kept for a day after a
 * rotation), the events written in the transaction of the change that caused them (the outbox), and one
 * delivery per event and endpoint with its attempts.
 */
export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('webhook_endpoints'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'text')
    .addColumn('last_success_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('webhook_endpoints_account_idx')
    .on('webhook_endpoints')
    .columns(['account_id', 'id'])
    .execute()

  await withId(db, db.schema.createTable('webhook_events'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('uid', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await withId(db, db.schema.createTable('webhook_deliveries'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'integer', (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('parked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_attempt_at', 'text')
    .addColumn('response_status', 'integer')
    .addColumn('duration_ms', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_endpoint_idx')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'id'])
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_parked_idx')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'parked', 'next_attempt_at'])
    .execute()
  // An account's attempts in flight and its oldest parked delivery: the per-account share of the delivery lane.
  await db.schema
    .createIndex('webhook_deliveries_account_idx')
    .on('webhook_deliveries')
    .columns(['account_id', 'status', 'parked', 'next_attempt_at'])
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_status_idx')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute()
  await db.schema.dropTable('webhook_events').execute()
  await db.schema.dropTable('webhook_endpoints').execute()
}
