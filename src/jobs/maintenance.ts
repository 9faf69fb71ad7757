import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { iso } from '../clock.js'
import type { DB } from '../db/tables.js'
import type { JobRunner } from './runner.js'
import { IDEMPOTENCY_WINDOW_MS } from '../modules/idempotency/idempotency.service.js'

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
    const idempotency = await db
      .deleteFrom('idempotency_keys')
      .where('created_at', '<', iso(new Date(clock.now().getTime() - IDEMPOTENCY_WINDOW_MS)))
      .executeTakeFirst()
    await runner.enqueue(PRUNE_JOB, null, { runAt: new Date(clock.now().getTime() + 86_400_000) })
    return { audit: Number(audit.numDeletedRows), jobs: Number(jobs.numDeletedRows), idempotency: Number(idempotency.numDeletedRows) }
  })
}

/** Queues the daily prune unless one is queued already (each run queues the next). */
export async function scheduleMaintenance(runner: JobRunner, db: Kysely<DB>): Promise<void> {
  const queued = await db.selectFrom('jobs').select('id').where('kind', '=', PRUNE_JOB).where('status', 'in', ['queued', 'running']).executeTakeFirst()
  if (!queued) await runner.enqueue(PRUNE_JOB, null)
}
