import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { Clock } from '../clock.js'
import { iso } from '../clock.js'
import type { DB } from '../db/tables.js'
import { ownTables } from '../db/database.js'
import { deleteOutboxBefore } from '../drivers/mail/outbox.repository.js'
import { pruneExpired } from '../modules/idempotency/idempotency.repository.js'
import { deleteFinishedBefore } from './jobs.repository.js'
import { deleteAuditBefore } from './maintenance.repository.js'
import { defineJob, type JobRunner } from './runner.js'

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
      return {
        audit: await deleteAuditBefore(db, before(this.retention.auditDays)),
        jobs: await deleteFinishedBefore(db, before(this.retention.jobDays)),
        outbox: await deleteOutboxBefore(ownTables(db), before(this.retention.mailDays)),
        // The idempotency keys' window is the idempotency area's rule, applied by its repository.
        idempotency: await pruneExpired(db, clock.now()),
      }
    },
  })

  /** Schedules the daily prune (one across every instance). */
  async schedule(): Promise<void> {
    await this.runner.every(this.pruneJob, 86_400_000)
  }
}
