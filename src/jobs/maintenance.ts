import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { iso } from '../clock.js'
import type { DB } from '../db/tables.js'
import type { JobRunner } from './runner.js'

export const PRUNE_JOB = 'maintenance.prune'

/** Registers housekeeping: pruning audit rows and finished jobs older than the retention period. */
export function registerMaintenanceJobs(runner: JobRunner, db: Kysely<DB>, clock: Clock, retentionDays: number): void {
  runner.register(PRUNE_JOB, async () => {
    const cutoff = iso(new Date(clock.now().getTime() - retentionDays * 86_400_000))
    const audit = await db.deleteFrom('audit_log').where('created_at', '<', cutoff).executeTakeFirst()
    const jobs = await db
      .deleteFrom('jobs')
      .where('status', 'in', ['done', 'failed'])
      .where('finished_at', '<', cutoff)
      .executeTakeFirst()
    return { audit: Number(audit.numDeletedRows), jobs: Number(jobs.numDeletedRows) }
  })
}
