import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * Jobs count the attempts during which their process died (a `running` job whose lease ran out is taken again): a
 * job that keeps ending its process is quarantined instead of being run again.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('jobs')
    .addColumn('crashes', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('crashes').execute()
}
