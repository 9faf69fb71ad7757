import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * Outbox messages by status: every metrics scrape counts the `failed` ones (hostapi_mail_outbox_failed), and without
 * this index that count reads the whole outbox (kept for 90 days).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.createIndex('outbox_status_idx').on('outbox').column('status').execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('outbox_status_idx').execute()
}
