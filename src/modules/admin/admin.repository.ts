import { sql } from 'kysely'
import type { Db } from '../../db/database.js'
import { likeContains } from '../../db/search.js'
import { decodeJob } from '../../jobs/jobs.repository.js'
import type { OutboxStatus } from '../../drivers/mail/outbox.tables.js'

/** The operator's queries: admin tokens, and reads across accounts (the admin API sees every tenant). */

export const insertToken = (db: Db, row: { token_hash: string; prefix: string; label: string; created_at: string }) =>
  db.insertInto('admin_tokens').values(row).returning('id').executeTakeFirstOrThrow()

export const findTokenByHash = (db: Db, hash: string) =>
  db.selectFrom('admin_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst()

export const touchToken = (db: Db, id: number, at: string) =>
  db.updateTable('admin_tokens').set({ last_used_at: at }).where('id', '=', id).execute()

export const listTokens = (db: Db) =>
  db
    .selectFrom('admin_tokens')
    .select(['id', 'prefix', 'label', 'last_used_at', 'revoked_at', 'created_at'])
    .orderBy('id')
    .execute()

export const revokeToken = (db: Db, id: number, at: string) =>
  db
    .updateTable('admin_tokens')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()

interface AccountFilter {
  search?: string
  status?: string
}

const accountsWhere = (db: Db, f: AccountFilter) => {
  let q = db.selectFrom('accounts')
  if (f.status) q = q.where('status', '=', f.status as 'active' | 'suspended')
  if (f.search) {
    const search = f.search
    q = q.where((eb) =>
      eb.or([
        likeContains(sql`lower(name)`, search),
        likeContains(sql`cast(customer_number as text)`, search),
        eb.exists(
          eb
            .selectFrom('users')
            .select('users.id')
            .whereRef('users.account_id', '=', 'accounts.id')
            .where(likeContains(sql`lower(users.email)`, search)),
        ),
      ]),
    )
  }
  return q
}

export const countAccounts = async (db: Db, f: AccountFilter): Promise<number> =>
  Number(
    (
      await accountsWhere(db, f)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

export const listAccounts = (db: Db, f: AccountFilter, limit: number, offset: number) =>
  accountsWhere(db, f).selectAll().orderBy('id').limit(limit).offset(offset).execute()

export const setAccountStatus = (db: Db, accountId: number, status: 'active' | 'suspended') =>
  db.updateTable('accounts').set({ status }).where('id', '=', accountId).executeTakeFirst()

export const listUsers = (db: Db, accountId: number) =>
  db
    .selectFrom('users')
    .select(['id', 'username', 'email', 'firstname', 'lastname', 'is_main_user', 'permissions', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute()

export interface AuditFilter {
  accountId?: number
  keyPrefix?: string
  path?: string
  status?: number
  from?: string
  to?: string
}

const auditWhere = (db: Db, f: AuditFilter) => {
  let q = db.selectFrom('audit_log')
  if (f.accountId !== undefined) q = q.where('audit_log.account_id', '=', f.accountId)
  if (f.keyPrefix) q = q.where('audit_log.key_prefix', '=', f.keyPrefix)
  if (f.path) q = q.where(likeContains(sql`lower(audit_log.path)`, f.path))
  if (f.status !== undefined) q = q.where('audit_log.status', '=', f.status)
  if (f.from) q = q.where('audit_log.created_at', '>=', f.from)
  if (f.to) q = q.where('audit_log.created_at', '<', f.to)
  return q
}

export const countAudit = async (db: Db, f: AuditFilter): Promise<number> =>
  Number(
    (
      await auditWhere(db, f)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

/** Newest first. */
export const listAudit = (db: Db, f: AuditFilter, limit: number, offset: number) =>
  auditWhere(db, f)
    .leftJoin('accounts', 'accounts.id', 'audit_log.account_id')
    .select([
      'audit_log.id',
      'audit_log.account_id',
      'accounts.customer_number',
      'audit_log.user_id',
      'audit_log.key_prefix',
      'audit_log.ip',
      'audit_log.method',
      'audit_log.path',
      'audit_log.status',
      'audit_log.request_id',
      'audit_log.created_at',
    ])
    .orderBy('audit_log.id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()

export interface JobFilter {
  status?: string
  kind?: string
  accountId?: number
}

const jobsWhere = (db: Db, f: JobFilter) => {
  let q = db.selectFrom('jobs')
  if (f.status) q = q.where('status', '=', f.status as 'queued')
  if (f.kind) q = q.where('kind', '=', f.kind)
  if (f.accountId !== undefined) q = q.where('account_id', '=', f.accountId)
  return q
}

export const countJobs = async (db: Db, f: JobFilter): Promise<number> =>
  Number(
    (
      await jobsWhere(db, f)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

/** Newest first. */
export const listJobs = async (db: Db, f: JobFilter, limit: number, offset: number) =>
  (await jobsWhere(db, f).selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute()).map(decodeJob)

/**
 * Queues a failed job again with a fresh set of attempts (and its count of crashes cleared: a quarantined job runs
 * again); false when it is not (or no longer) failed.
 */
export const requeueFailedJob = async (db: Db, id: number, now: string): Promise<boolean> => {
  const r = await db
    .updateTable('jobs')
    .set({
      status: 'queued',
      attempts: 0,
      crashes: 0,
      run_at: now,
      updated_at: now,
      finished_at: null,
      locked_until: null,
    })
    .where('id', '=', id)
    .where('status', '=', 'failed')
    .executeTakeFirst()
  return Number(r.numUpdatedRows) === 1
}

/** Jobs per kind and status, for the metrics. */
export const jobCounts = (db: Db) =>
  db
    .selectFrom('jobs')
    .select(['kind', 'status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['kind', 'status'])
    .execute()

/**
 * Per kind, the run time of the oldest job that is due (queued with `run_at` at or before `now`), for the metrics.
 * Jobs waiting for a later run (recurring ones, retries in their back-off) are not due and not counted.
 */
export const oldestDueJobs = (db: Db, now: string) =>
  db
    .selectFrom('jobs')
    .select(['kind', (eb) => eb.fn.min('run_at').as('oldest')])
    .where('status', '=', 'queued')
    .where('run_at', '<=', now)
    .groupBy('kind')
    .execute()

export interface OutboxFilter {
  accountId?: number
  recipient?: string
  kind?: string
  status?: OutboxStatus
}

const outboxWhere = (db: Db, f: OutboxFilter) => {
  let q = db.selectFrom('outbox')
  if (f.accountId !== undefined) q = q.where('account_id', '=', f.accountId)
  if (f.recipient) q = q.where(sql`lower(recipient)`, '=', f.recipient.toLowerCase())
  if (f.kind) q = q.where('kind', '=', f.kind)
  if (f.status) q = q.where('status', '=', f.status)
  return q
}

export const countOutbox = async (db: Db, f: OutboxFilter): Promise<number> =>
  Number(
    (
      await outboxWhere(db, f)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

/** Newest first. */
export const listOutbox = (db: Db, f: OutboxFilter, limit: number, offset: number) =>
  outboxWhere(db, f).selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute()

export const findOutboxMessage = (db: Db, id: number) =>
  db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst()
