import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import { iso } from '../clock.js'
import type { Dialect } from '../db/database.js'
import type { DB, Job } from '../db/tables.js'
import * as repo from './jobs.repository.js'

/** What a job handler sees. A handler throws to fail the attempt; the runner retries with backoff. */
export interface JobContext {
  job: Job
  payload: unknown
  attempt: number
}

export type JobHandler = (ctx: JobContext) => Promise<unknown>

export interface EnqueueOptions {
  accountId?: number | null
  /** Run no earlier than this time. */
  runAt?: Date
  maxAttempts?: number
}

const LEASE_MS = 60_000
const BACKOFF_BASE_MS = 1_000
const BACKOFF_MAX_MS = 5 * 60_000

/**
 * The job queue: a table every instance polls. A job is claimed by one worker at a time and runs
 * until it succeeds or its attempts are used up; retries back off exponentially.
 */
export class JobRunner {
  readonly workerId = `${process.pid}-${randomUUID().slice(0, 8)}`
  private readonly handlers = new Map<string, JobHandler>()
  private timer: NodeJS.Timeout | null = null
  private running = new Set<Promise<void>>()
  private stopped = true
  private wake: (() => void) | null = null

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: { pollMs: number; concurrency: number },
  ) {}

  /** Registers the handler for a kind of job (one per kind). */
  register(kind: string, handler: JobHandler): void {
    if (this.handlers.has(kind)) throw new Error(`A handler for job kind ${kind} exists already`)
    this.handlers.set(kind, handler)
  }

  /** Queues a job; it runs on whichever instance claims it first. */
  async enqueue(kind: string, payload: unknown, opts: EnqueueOptions = {}): Promise<number> {
    const now = this.clock.now()
    const row = await repo.insertJob(this.db, {
      kind,
      account_id: opts.accountId ?? null,
      payload: JSON.stringify(payload ?? null),
      max_attempts: opts.maxAttempts ?? 5,
      run_at: iso(opts.runAt ?? now),
      created_at: iso(now),
    })
    this.poke()
    return row.id
  }

  get(id: number) {
    return repo.findJob(this.db, id)
  }

  /** Starts polling. */
  start(): void {
    if (!this.stopped) return
    this.stopped = false
    void this.loop()
  }

  /** Stops claiming new jobs and waits for the running ones to finish. */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.wake?.()
    await Promise.allSettled([...this.running])
  }

  /** Claims and runs due jobs until none is left; returns how many ran. Used by the loop and by tests. */
  async drain(): Promise<number> {
    let n = 0
    for (;;) {
      const job = await this.claim()
      if (!job) break
      await this.execute(job)
      n++
    }
    return n
  }

  private poke(): void {
    this.wake?.()
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        while (!this.stopped && this.running.size < this.opts.concurrency) {
          const job = await this.claim()
          if (!job) break
          const p = this.execute(job).finally(() => {
            this.running.delete(p)
            this.poke()
          })
          this.running.add(p)
        }
      } catch (err) {
        this.log.error({ err }, 'job poll failed')
      }
      if (this.stopped) break
      await new Promise<void>((resolve) => {
        this.wake = resolve
        this.timer = setTimeout(resolve, this.opts.pollMs)
      })
      this.wake = null
    }
  }

  private async claim(): Promise<Job | undefined> {
    const now = this.clock.now()
    return repo.claimNext(this.db, this.dialect, this.workerId, iso(now), iso(new Date(now.getTime() + LEASE_MS)), [...this.handlers.keys()])
  }

  private async execute(job: Job): Promise<void> {
    const handler = this.handlers.get(job.kind)!
    try {
      const result = await handler({ job, payload: JSON.parse(job.payload), attempt: job.attempts })
      await repo.finishJob(this.db, job.id, this.workerId, { status: 'done', result: JSON.stringify(result ?? null), now: iso(this.clock.now()) })
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      const now = this.clock.now()
      const final = job.attempts >= job.max_attempts
      this.log.warn({ jobId: job.id, kind: job.kind, attempt: job.attempts, err: message }, final ? 'job failed' : 'job attempt failed, will retry')
      const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (job.attempts - 1))
      await repo.finishJob(this.db, job.id, this.workerId, {
        status: final ? 'failed' : 'queued',
        last_error: message,
        run_at: final ? undefined : iso(new Date(now.getTime() + delay)),
        now: iso(now),
      })
    }
  }
}
