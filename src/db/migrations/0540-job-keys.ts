import { sql } from 'kysely'
import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * Job keys: a job queued under a key is queued once. The unique index covers only queued jobs, so the same work
 * never waits twice, and may be queued again once it has started (a recurring job's next run, the processing of
 * an order corrected while it runs); the claim keeps the jobs of one key from running at once. The second index
 * finds a key's last run.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('key', 'text').execute()
  await sql`create unique index jobs_active_key_idx on jobs (key) where status = 'queued' and key is not null`.execute(
    db,
  )
  await db.schema.createIndex('jobs_key_idx').on('jobs').columns(['key', 'id']).execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('jobs_key_idx').execute()
  await db.schema.dropIndex('jobs_active_key_idx').execute()
  await db.schema.alterTable('jobs').dropColumn('key').execute()
}
