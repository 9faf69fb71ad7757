import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * What became of an outbox message: `stored` (the built-in driver keeps it, nothing delivers it; every message
 * before this migration), `sent` (a relay accepted it) or `failed` (a relay refused it for good), with the
 * relay's reply.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('outbox')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('stored'))
    .execute()
  await db.schema.alterTable('outbox').addColumn('status_detail', 'text').execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('outbox').dropColumn('status_detail').execute()
  await db.schema.alterTable('outbox').dropColumn('status').execute()
}
