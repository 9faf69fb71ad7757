import { sql } from 'kysely'
import type { Db, Dialect } from '../db/database.js'
import type { Job } from '../db/tables.js'
import { jsonColumns, type Decoded } from '../db/json-columns.js'

/**
 * Inserts a queued job; with a `key`, only when no queued job holds that key (the unique index of migration 0510),
 * and then the id is the one of the job that holds it.
 */
export async function insertJob(
  db: Db,
  row: {
    kind: string
    account_id: number | null
    payload: string
    max_attempts: number
    run_at: string
    created_at: string
    key?: string | null
  },
): Promise<{ id: number; created: boolean }> {
  const inserted = await db
    .insertInto('jobs')
    .values({ ...row, key: row.key ?? null, status: 'queued', attempts: 0, updated_at: row.created_at })
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst()
  if (inserted) return { id: inserted.id, created: true }
  const holder = row.key ? await activeJobOfKey(db, row.key) : undefined
  if (!holder) throw new Error(`Job ${row.kind} was not queued and no job holds its key`)
  return { id: holder.id, created: false }
}

/** The job of `key` in one of `statuses` (queued, the one that holds the key, by default), if any. */
export const activeJobOfKey = (db: Db, key: string, statuses: ('queued' | 'running')[] = ['queued']) =>
  db
    .selectFrom('jobs')
    .select(['id', 'status', 'run_at'])
    .where('key', '=', key)
    .where('status', 'in', statuses)
    .orderBy('id')
    .executeTakeFirst()

/** When the latest job of `key` that is no longer waiting (running or ended) was due, if one was. */
export const lastRunOfKey = async (db: Db, key: string): Promise<string | null> =>
  (
    await db
      .selectFrom('jobs')
      .select('run_at')
      .where('key', '=', key)
      .where('status', '<>', 'queued')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()
  )?.run_at ?? null

/** The jobs of `key`, oldest first. */
export const jobsOfKey = async (db: Db, key: string): Promise<DecodedJob[]> =>
  (await db.selectFrom('jobs').selectAll().where('key', '=', key).orderBy('id').execute()).map(decodeJob)

/** Ends the queued job of `key` as failed with `reason` (the work it would do is cancelled). */
export const dropQueuedOfKey = (db: Db, key: string, reason: string, now: string) =>
  db
    .updateTable('jobs')
    .set({ status: 'failed', last_error: reason, updated_at: now, finished_at: now })
    .where('key', '=', key)
    .where('status', '=', 'queued')
    .execute()

/** Deaths of its process during attempts after which a job is quarantined: failed, and not run again. */
export const CRASH_LIMIT = 2

/**
 * Claims the next due job for `worker` in one statement: a queued job whose time (`now`) has come, or a running
 * one whose lease ran out (its worker died: counted in `crashes`). Leases are read and set on the wall clock
 * (`lease.now`, `lease.until`). PostgreSQL skips rows other instances hold; SQLite has one writer.
 * A queued job waits while a job of its key runs, so the work of one key never runs twice at once.
 */
export async function claimNext(
  db: Db,
  dialect: Dialect,
  worker: string,
  now: string,
  lease: { now: string; until: string },
  kinds: string[],
): Promise<Job | undefined> {
  if (kinds.length === 0) return undefined
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``
  const result = await sql<Job>`
    update jobs set status = 'running', attempts = attempts + 1,
      crashes = crashes + case when status = 'running' then 1 else 0 end, locked_by = ${worker},
      locked_until = ${lease.until}, updated_at = ${now}
    where id = (
      select id from jobs
      where ((status = 'queued' and run_at <= ${now}) or (status = 'running' and locked_until < ${lease.now}))
        and kind in (${sql.join(kinds)})
        and (key is null or status = 'running' or not exists (
          select 1 from jobs r where r.key = jobs.key and r.status = 'running' and r.locked_until >= ${lease.now}))
      order by run_at, id
      limit 1
      ${lock}
    )
    returning *`.execute(db)
  return result.rows[0]
}

/** Moves the lease of a job `worker` runs to `leaseUntil`; false when the worker no longer holds it. */
export const renewLease = async (db: Db, id: number, worker: string, leaseUntil: string): Promise<boolean> =>
  Number(
    (
      await db
        .updateTable('jobs')
        .set({ locked_until: leaseUntil })
        .where('id', '=', id)
        .where('locked_by', '=', worker)
        .where('status', '=', 'running')
        .executeTakeFirst()
    ).numUpdatedRows,
  ) === 1

export const finishJob = (
  db: Db,
  id: number,
  worker: string,
  changes: {
    status: 'done' | 'failed' | 'queued'
    result?: string | null
    last_error?: string | null
    run_at?: string
    now: string
  },
) =>
  db
    .updateTable('jobs')
    .set({
      status: changes.status,
      result: changes.result ?? null,
      last_error: changes.last_error ?? null,
      ...(changes.run_at ? { run_at: changes.run_at } : {}),
      // locked_by stays: it tells the operator which worker ran the job last.
      locked_until: null,
      updated_at: changes.now,
      finished_at: changes.status === 'queued' ? null : changes.now,
    })
    .where('id', '=', id)
    .where('locked_by', '=', worker)
    .executeTakeFirst()

/** The JSON columns of a job row, decoded. */
export interface JobJson {
  payload: unknown
  result: unknown
}

/** A job row with its payload and result decoded. */
export type DecodedJob = Decoded<Job, JobJson>

/** Decodes the payload and result of (part of) a job row. */
export const decodeJob = jsonColumns<JobJson>('payload', 'result')

/** One job by id, decoded. */
export const findJob = async (db: Db, id: number): Promise<DecodedJob | undefined> => {
  const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst()
  return row && decodeJob(row)
}

/** True when a job of `kind` other than `exceptId` is queued or running with a payload whose JSON starts so. */
export const hasJobWithPayload = async (db: Db, kind: string, payloadStart: string, exceptId: number) =>
  (await db
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', kind)
    .where('status', 'in', ['queued', 'running'])
    .where('id', '!=', exceptId)
    .where(sql<string>`substr(payload, 1, ${payloadStart.length})`, '=', payloadStart)
    .executeTakeFirst()) !== undefined

/** Makes every queued job of `kind` that waits for a later time due at `now`; returns how many. */
export const makeDue = async (db: Db, kind: string, now: string): Promise<number> => {
  const r = await db
    .updateTable('jobs')
    .set({ run_at: now, updated_at: now })
    .where('kind', '=', kind)
    .where('status', '=', 'queued')
    .where('run_at', '>', now)
    .executeTakeFirst()
  return Number(r.numUpdatedRows)
}

/** Deletes the jobs that finished (done or failed) before `cutoff`; resolves with how many. */
export const deleteFinishedBefore = async (db: Db, cutoff: string): Promise<number> =>
  Number(
    (
      await db
        .deleteFrom('jobs')
        .where('status', 'in', ['done', 'failed'])
        .where('finished_at', '<', cutoff)
        .executeTakeFirst()
    ).numDeletedRows,
  )

export const countByStatus = (db: Db) =>
  db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute()

/** Quarantined jobs (failed after CRASH_LIMIT deaths of their process) per kind. */
export const quarantinedCounts = (db: Db) =>
  db
    .selectFrom('jobs')
    .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', '=', 'failed')
    .where('crashes', '>=', CRASH_LIMIT)
    .groupBy('kind')
    .execute()
