import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Static, TNull, TSchema } from 'typebox'
import type { Clock } from '../clock.js'
import { iso, systemClock } from '../clock.js'
import type { Db, Dialect } from '../db/database.js'
import type { DB, Job } from '../db/tables.js'
import { isDatabaseUnavailable } from '../db/errors.js'
import { entryOf } from '../lib/invariant.js'
import * as repo from './jobs.repository.js'

/** What a job handler sees besides its payload. */
export interface JobContext {
  job: Job
  attempt: number
}

/**
 * A kind of job: its name, the schema of its payload and the handler. The handler throws to fail the attempt;
 * the runner retries with backoff.
 */
export interface JobDefinition<S extends TSchema = TSchema> {
  readonly name: string
  readonly payload: S
  /**
   * Run every so often (`JobRunner.every`), caused by time and by no change. Every other kind is queued in the
   * transaction of the change that causes it.
   */
  readonly recurring?: true
  handle(payload: Static<S>, ctx: JobContext): Promise<unknown>
  /**
   * Called once the job is quarantined (its process died during its attempts; it is not run again): closes what
   * the job leaves unfinished, e.g. marks its work failed, with `reason`.
   */
  quarantined?(payload: Static<S>, reason: string): Promise<void>
}

/** What a queued job is: a kind's name and the schema of its payload (a definition without its handler). */
export type JobKind<S extends TSchema = TSchema> = Pick<JobDefinition<S>, 'name' | 'payload'>

/** States a job definition; the payload's type follows from its schema. */
export function defineJob<S extends TSchema>(definition: JobDefinition<S>): JobDefinition<S> {
  return definition
}

// The value checker is loaded with the first job taken, not at start.
let valueChecker: Promise<typeof import('typebox/value')> | null = null

/** The first problem of a payload that does not match its schema, as `path: message`. */
async function payloadProblem(schema: TSchema, payload: unknown): Promise<string | null> {
  valueChecker ??= import('typebox/value')
  const { Value } = await valueChecker
  if (Value.Check(schema, payload)) return null
  const first = [...Value.Errors(schema, payload)][0]
  return first ? `${first.instancePath || '/'}: ${first.message}` : 'does not match its schema'
}

export interface EnqueueOptions {
  /**
   * The transaction of the change that causes the job: the job is inserted in it and commits with the change, or not
   * at all, so no process death between the two can strand the work. The runner finds it at its next poll; `poke()`
   * after the commit runs it at once. Required: work caused by no change (an operator's retry) passes the database
   * itself, and is then run at once.
   */
  trx: Db
  /**
   * Names the work: while a job of this key is queued, queueing it again queues nothing and answers that job's id.
   * A queued job of a key is not claimed while another of the same key runs, so the work never runs twice at once.
   */
  key?: string
  accountId?: number | null
  /** Run no earlier than this time. */
  runAt?: Date
  maxAttempts?: number
}

/**
 * Inserts a job of `kind` in `opts.trx`, created at `now`: the one way a job row is written. `JobRunner.enqueue` uses
 * it; so does code that writes in a transaction it was handed and holds no runner (a webhook event's deliveries).
 * A runner finds the job at its next poll.
 */
export async function insertJobIn<S extends TSchema>(
  kind: JobKind<S>,
  payload: Static<S>,
  opts: EnqueueOptions & { now: Date },
): Promise<number> {
  const { id } = await repo.insertJob(opts.trx, {
    kind: kind.name,
    account_id: opts.accountId ?? null,
    payload: JSON.stringify(payload ?? null),
    max_attempts: opts.maxAttempts ?? 5,
    run_at: iso(opts.runAt ?? opts.now),
    created_at: iso(opts.now),
    key: opts.key ?? null,
  })
  return id
}

/** How many jobs one instance runs at once: `concurrency` in the shared lane, and each laned kind in its own. */
export interface RunnerOptions {
  pollMs: number
  concurrency: number
  /** Kinds with slots of their own: claimed only into them, so they never wait for other kinds nor hold them up. */
  lanes?: Record<string, number>
  /** How long a claim holds a job before another worker may take it as abandoned; renewed while the job runs. */
  leaseMs?: number
  /** Called as an attempt starts, before the handler (sandbox fault injection: a job that ends its process). */
  onAttempt?: (job: Job) => void
}

// The lane of the kinds that have none of their own.
const SHARED = ''

const LEASE_MS = 60_000
const BACKOFF_BASE_MS = 1_000
const BACKOFF_MAX_MS = 5 * 60_000

/**
 * The job queue: a table every instance polls. A job is claimed by one worker at a time and runs
 * until it succeeds or its attempts are used up; retries back off exponentially. The worker renews its lease
 * while the job runs; a job whose lease ran out while it was running is taken again as one whose process died:
 * it then runs alone in its process (so a second death is its own), and after CRASH_LIMIT deaths it is
 * quarantined, failed without being run again, so that no job can keep the instances restarting.
 */
export class JobRunner {
  readonly workerId = `${process.pid}-${randomUUID().slice(0, 8)}`
  private readonly definitions = new Map<string, JobDefinition>()
  private timer: NodeJS.Timeout | null = null
  private running = new Set<Promise<void>>()
  // The jobs running in each lane (SHARED or a laned kind).
  private inLane = new Map<string, number>()
  private stopped = true
  private wake: (() => void) | null = null
  // Attempts executing in this process (loop and drain), and the attempts waiting for them to end.
  private executing = 0
  private idleWaiters: (() => void)[] = []
  // A job whose process died during an attempt is running or waiting to run alone: nothing else is claimed.
  private solo = false
  // The recurring jobs this instance keeps queued, and when to look at each again.
  private readonly schedules = new Map<string, { definition: JobDefinition<TNull>; everyMs: number; checkAt: number }>()

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: RunnerOptions,
  ) {}

  /** Registers a kind of job (one definition per name). */
  register(definition: JobDefinition): void {
    const { name } = definition
    if (this.definitions.has(name)) throw new Error(`A handler for job kind ${name} exists already`)
    this.definitions.set(name, definition)
  }

  /** The kinds of job registered. */
  get kinds(): string[] {
    return [...this.definitions.keys()]
  }

  /** The kinds registered as recurring: caused by time, by no change. */
  get recurring(): string[] {
    return [...this.definitions.values()].filter((d) => d.recurring).map((d) => d.name)
  }

  /**
   * Queues a job of a kind (its definition, or its name and payload schema where the handler is defined elsewhere);
   * it runs on whichever instance claims it first. Answers the job's id (with a `key` already queued: the id of the
   * job queued under it).
   */
  async enqueue<S extends TSchema>(definition: JobKind<S>, payload: Static<S>, opts: EnqueueOptions): Promise<number> {
    const id = await insertJobIn(definition, payload, { ...opts, now: this.clock.now() })
    if (!opts.trx.isTransaction) this.poke()
    return id
  }

  /**
   * Runs a job without payload every `everyMs`, one across every instance: each instance that schedules it keeps one
   * run queued under the key `every:<kind>`, due `everyMs` after the last run was due (at once when none was, or
   * when that time has passed). The job does not queue its next run itself.
   */
  async every(definition: JobDefinition<TNull>, everyMs: number): Promise<void> {
    if (!definition.recurring) throw new Error(`Job kind ${definition.name} is run every so often but not recurring`)
    this.schedules.set(definition.name, { definition, everyMs, checkAt: 0 })
    await this.keepScheduled(definition.name)
  }

  /** Wakes the poll loop: after the commit of a transaction that queued jobs, so they run at once. */
  poke(): void {
    this.wake?.()
  }

  /** The jobs queued under `key`, oldest first. */
  ofKey(key: string, db: Db = this.db) {
    return repo.jobsOfKey(db, key)
  }

  /** Drops the queued job of `key`, in the caller's transaction: the work it would do is cancelled. */
  async dropQueued(trx: Db, key: string, reason: string): Promise<void> {
    await repo.dropQueuedOfKey(trx, key, reason, iso(this.clock.now()))
  }

  /**
   * Whether a job of this kind other than `exceptId` is queued or running with a payload whose JSON starts with
   * `payloadStart` (a payload whose first field names what the job works on).
   */
  pendingWith(definition: JobDefinition, payloadStart: string, exceptId: number): Promise<boolean> {
    return repo.hasJobWithPayload(this.db, definition.name, payloadStart, exceptId)
  }

  /**
   * Ends the backoff of every queued job of this kind: they run now. For work that waited on a back end that is
   * known to be back, so it does not sit out the rest of its backoff.
   */
  async release(definition: JobDefinition): Promise<number> {
    const n = await repo.makeDue(this.db, definition.name, iso(this.clock.now()))
    if (n > 0) this.poke()
    return n
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

  /** Claims and runs due jobs (of `kinds`, default all) until none is left; returns how many ran. */
  async drain(kinds?: string[]): Promise<number> {
    let n = 0
    for (;;) {
      const job = await this.claim(kinds)
      if (!job) break
      await this.execute(job)
      n++
    }
    return n
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        for (const kind of this.schedules.keys()) await this.keepScheduled(kind)
        for (;;) {
          const kinds = this.stopped ? [] : this.claimable()
          if (kinds.length === 0) break
          const job = await this.claim(kinds)
          if (!job) break
          const lane = this.laneOf(job.kind)
          this.inLane.set(lane, (this.inLane.get(lane) ?? 0) + 1)
          // execute records every outcome; what it cannot record (the runner stopped during an outage) is logged, and
          // the job is taken again once its lease ends.
          const p = this.execute(job)
            .catch((err: unknown) => this.log.error({ err, jobId: job.id, kind: job.kind }, 'job outcome not recorded'))
            .finally(() => {
              this.running.delete(p)
              this.inLane.set(lane, (this.inLane.get(lane) ?? 1) - 1)
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

  /**
   * Queues the next run of a recurring job unless one is queued. Looked at again when the queued run is due (a run
   * that is running or done is followed by the next one), so an instance reads nothing while the run waits.
   */
  private async keepScheduled(kind: string): Promise<void> {
    const schedule = entryOf(this.schedules, kind, 'the schedule of job kind')
    const now = this.clock.now().getTime()
    if (now < schedule.checkAt) return
    const key = `every:${kind}`
    const queued = await repo.activeJobOfKey(this.db, key, ['queued'])
    if (queued) {
      schedule.checkAt = Date.parse(queued.run_at)
      return
    }
    const last = await repo.lastRunOfKey(this.db, key)
    const due = last === null ? now : Math.max(now, Date.parse(last) + schedule.everyMs)
    await this.enqueue(schedule.definition, null, { trx: this.db, key, runAt: new Date(due) })
    schedule.checkAt = due
  }

  private laneOf(kind: string): string {
    return this.opts.lanes?.[kind] === undefined ? SHARED : kind
  }

  /** How many jobs `lane` (SHARED or a laned kind, as laneOf names it) runs at once. */
  private laneLimit(lane: string): number {
    if (lane === SHARED) return this.opts.concurrency
    const limit = this.opts.lanes?.[lane]
    if (limit === undefined) throw new Error(`job lane ${lane} has no limit`)
    return limit
  }

  /** The registered kinds whose lane has a free slot: one claim takes the earliest due job among them. */
  private claimable(): string[] {
    const free = (lane: string) => (this.inLane.get(lane) ?? 0) < this.laneLimit(lane)
    return [...this.definitions.keys()].filter((kind) => free(this.laneOf(kind)))
  }

  private get leaseMs(): number {
    return this.opts.leaseMs ?? LEASE_MS
  }

  // Leases are kept on the wall clock, not on the service's: moving a sandbox clock on abandons no running job.
  private leaseEnd(): string {
    return iso(new Date(systemClock.now().getTime() + this.leaseMs))
  }

  private async claim(kinds = [...this.definitions.keys()]): Promise<Job | undefined> {
    if (this.solo) return undefined
    const now = iso(this.clock.now())
    const lease = { now: iso(systemClock.now()), until: this.leaseEnd() }
    return repo.claimNext(this.db, this.dialect, this.workerId, now, lease, kinds)
  }

  /** Renews the job's lease every third of it until the returned function is called. */
  private holdLease(job: Job): () => void {
    const timer = setInterval(() => {
      repo.renewLease(this.db, job.id, this.workerId, this.leaseEnd()).then(
        (held) => held || this.log.warn({ jobId: job.id, kind: job.kind }, 'job lease lost'),
        (err) => this.log.warn({ jobId: job.id, kind: job.kind, err }, 'job lease renewal failed'),
      )
    }, this.leaseMs / 3)
    timer.unref()
    return () => clearInterval(timer)
  }

  /** Counts an attempt as executing; a suspect one first waits until no other attempt of this process runs. */
  private async enter(alone: boolean): Promise<void> {
    while (alone && this.executing > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve))
    this.executing++
  }

  private leave(): void {
    this.executing--
    for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  /** Fails a job whose process died during CRASH_LIMIT of its attempts, without running it again. */
  private async quarantine(job: Job): Promise<void> {
    const reason =
      `quarantined: its process died during ${job.crashes} attempts (the lease ran out while it ran); ` +
      'it is not run again until an operator retries it'
    this.log.error({ jobId: job.id, kind: job.kind, crashes: job.crashes }, 'job quarantined')
    await repo.finishJob(this.db, job.id, this.workerId, {
      status: 'failed',
      last_error: reason,
      now: iso(this.clock.now()),
    })
    const { payload } = repo.decodeJob(job)
    const definition = entryOf(this.definitions, job.kind, 'the definition of job kind')
    if (!definition.quarantined || (await payloadProblem(definition.payload, payload))) return
    try {
      await definition.quarantined(payload, reason)
    } catch (err) {
      this.log.error({ jobId: job.id, kind: job.kind, err }, 'closing a quarantined job failed')
    }
  }

  /**
   * Records a job's outcome. While the database cannot be reached (a failover) it tries again every poll interval,
   * with the lease still renewed, until the write goes through or the runner stops: the work done is recorded as
   * done once the database is back, not run again as one whose process died.
   */
  private async finish(job: Job, changes: Parameters<typeof repo.finishJob>[3]): Promise<void> {
    for (;;) {
      try {
        await repo.finishJob(this.db, job.id, this.workerId, changes)
        return
      } catch (err) {
        if (this.stopped || !isDatabaseUnavailable(err)) throw err
        this.log.warn({ jobId: job.id, kind: job.kind, err }, 'job outcome not recorded yet: database unavailable')
        await new Promise((resolve) => setTimeout(resolve, Math.max(this.opts.pollMs, 200)))
      }
    }
  }

  private async execute(job: Job): Promise<void> {
    if (job.crashes >= repo.CRASH_LIMIT) return this.quarantine(job)
    const definition = entryOf(this.definitions, job.kind, 'the definition of job kind')
    // Set before the first await, so the loop claims nothing more while this job waits to run alone.
    const suspect = job.crashes > 0
    if (suspect) {
      this.solo = true
      this.log.warn({ jobId: job.id, kind: job.kind, crashes: job.crashes }, 'job taken again after its process died')
    }
    const release = this.holdLease(job)
    await this.enter(suspect)
    try {
      const { payload } = repo.decodeJob(job)
      const problem = await payloadProblem(definition.payload, payload)
      if (problem) throw new Error(`Invalid payload for job kind ${job.kind}: ${problem}`)
      this.opts.onAttempt?.(job)
      const result = await definition.handle(payload, { job, attempt: job.attempts })
      await this.finish(job, { status: 'done', result: JSON.stringify(result ?? null), now: iso(this.clock.now()) })
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      const now = this.clock.now()
      const final = job.attempts >= job.max_attempts
      this.log.warn(
        { jobId: job.id, kind: job.kind, attempt: job.attempts, err: message },
        final ? 'job failed' : 'job attempt failed, will retry',
      )
      const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (job.attempts - 1))
      await this.finish(job, {
        status: final ? 'failed' : 'queued',
        last_error: message,
        run_at: final ? undefined : iso(new Date(now.getTime() + delay)),
        now: iso(now),
      })
    } finally {
      release()
      this.leave()
      if (suspect) this.solo = false
    }
  }
}
