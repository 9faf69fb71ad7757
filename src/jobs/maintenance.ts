import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { Clock } from '../clock.js'
import { iso } from '../clock.js'
import type { DB } from '../db/tables.js'
import { defineJob, type JobRunner } from './runner.js'
import { IDEMPOTENCY_WINDOW_MS } from '../modules/idempotency/idempotency.service.js'

/** The job kind of the daily prune. */
export const PRUNE_JOB = 'maintenance.prune'

/** Housekeeping: pruning audit rows and finished jobs older than the retention period. */
export class Maintenance {
  constructor(
    private readonly runner: JobRunner,
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly retentionDays: number,
  ) {}

  /** The daily prune. */
  readonly pruneJob = defineJob({
    name: PRUNE_JOB,
    payload: Type.Null(),
    handle: async () => {
      const { db, clock } = this
      const cutoff = iso(new Date(clock.now().getTime() - this.retentionDays * 86_400_000))
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
      return {
        audit: Number(audit.numDeletedRows),
        jobs: Number(jobs.numDeletedRows),
        idempotency: Number(idempotency.numDeletedRows),
      }
    },
  })

  /** Schedules the daily prune (one across every instance). */
  async schedule(): Promise<void> {
    await this.runner.every(this.pruneJob, 86_400_000)
  }
}
