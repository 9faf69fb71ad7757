import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * The push state of each zone a pushing DNS driver (PowerDNS) serves: the serial last pushed, since when a change
 * waits to be pushed, and the last push error, for the operator (admin API). One row per zone name.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('dns_zone_sync')
    .addColumn('zone', 'text', (c) => c.primaryKey())
    .addColumn('pushed_serial', 'bigint')
    .addColumn('pushed_at', 'text')
    .addColumn('changed_at', 'text')
    .addColumn('pending_since', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'text')
    .execute()
}
