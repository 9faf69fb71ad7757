import { sql } from 'kysely'
import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * Which events an endpoint receives. The owner of a webhook endpoint: the user whose permissions decide which events it receives. Endpoints made
 * before owners were stored get the account's main user, who reads every event, so they receive what they did.
 * Deleting the user leaves the endpoint without owner: it receives nothing until a user of the account sets its
 * `url` or `events` and so becomes its owner. An event whose resource only one sub-user may read besides main users
 * (a ticket: the user who opened it) names that user, 0 when none may; null (every event before) when every user
 * holding the event's area may. A delivery keeps the detail of its last failed attempt apart from what the customer
 * sees.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .execute()
  await db.schema.alterTable('webhook_events').addColumn('reader_id', 'integer').execute()
  // A failed attempt's detail (which address, which socket error) for the operator; `last_error` keeps what the
  // customer sees, the class of the failure.
  await db.schema.alterTable('webhook_deliveries').addColumn('error_detail', 'text').execute()
  await db
    .updateTable('webhook_endpoints')
    .set({
      user_id: sql`(select min(u.id) from users u where u.account_id = webhook_endpoints.account_id and u.is_main_user = 1)`,
    })
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('error_detail').execute()
  await db.schema.alterTable('webhook_events').dropColumn('reader_id').execute()
  await db.schema.alterTable('webhook_endpoints').dropColumn('user_id').execute()
}
