import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { Clock } from '../clock.js'
import { iso } from '../clock.js'
import type { DB } from '../db/tables.js'
import { defineJob, type JobRunner } from './runner.js'
import { IDEMPOTENCY_WINDOW_MS } from '../modules/idempotency/idempotency.service.js'

/** The job kind of the daily prune. */
export const PRUNE_JOB = 'maintenance.prune'

/** How many days the daily prune keeps each kind of row. */
export interface Retention {
  auditDays: number
  jobDays: number
  mailDays: number
}

/** What Maintenance is built on. */
export interface MaintenanceDeps {
  runner: JobRunner
  db: Kysely<DB>
  clock: Clock
  retention: Retention
}

/** Housekeeping: pruning audit rows, finished jobs and outbox messages older than their retention period. */
export class Maintenance {
  private readonly runner: JobRunner
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly retention: Retention

  constructor(deps: MaintenanceDeps) {
    this.runner = deps.runner
    this.db = deps.db
    this.clock = deps.clock
    this.retention = deps.retention
  }

  /** The daily prune. */
  readonly pruneJob = defineJob({
    name: PRUNE_JOB,
    payload: Type.Null(),
    recurring: true,
    handle: async () => {
      const { db, clock } = this
      const before = (days: number) => iso(new Date(clock.now().getTime() - days * 86_400_000))
      const audit = await db
        .deleteFrom('audit_log')
        .where('created_at', '<', before(this.retention.auditDays))
        .executeTakeFirst()
      const jobs = await db
        .deleteFrom('jobs')
        .where('status', 'in', ['done', 'failed'])
        .where('finished_at', '<', before(this.retention.jobDays))
        .executeTakeFirst()
      const outbox = await db
        .deleteFrom('outbox')
        .where('created_at', '<', before(this.retention.mailDays))
        .executeTakeFirst()
      const idempotency = await db
        .deleteFrom('idempotency_keys')
        .where('created_at', '<', iso(new Date(clock.now().getTime() - IDEMPOTENCY_WINDOW_MS)))
        .executeTakeFirst()
      return {
        audit: Number(audit.numDeletedRows),
        jobs: Number(jobs.numDeletedRows),
        outbox: Number(outbox.numDeletedRows),
        idempotency: Number(idempotency.numDeletedRows),
      }
    },
  })

  /** Schedules the daily prune (one across every instance). */
  async schedule(): Promise<void> {
    await this.runner.every(this.pruneJob, 86_400_000)
  }
}
