import { isUniqueViolation } from '../../db/errors.js'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { pageOf, pagination } from '../../lib/paging.js'
import * as iamRepo from '../iam/iam.repository.js'
import { findJob, quarantinedCounts, type DecodedJob } from '../../jobs/jobs.repository.js'
import * as repo from './admin.repository.js'
import { parseTime, type PageInput } from './admin-input.js'
import type { OutboxMessage, OutboxStatus } from '../../drivers/mail/outbox.tables.js'
import type { MailService } from '../mail/mail.service.js'

/** What AdminActivityService is built on. */
export interface AdminActivityServiceDeps {
  db: Kysely<DB>
  clock: Clock
  mail: MailService
}

/** What happened across tenants, for the operator: the audit log, the job queue and the mail outbox. */
export class AdminActivityService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly mail: MailService

  constructor(deps: AdminActivityServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.mail = deps.mail
  }

  /** The audit log, newest first; `account` is a customer number (an unknown one matches nothing). */
  async audit(
    query: PageInput & {
      account?: number
      key_prefix?: string
      path?: string
      status?: number
      from?: string
      to?: string
    },
  ) {
    const page = pageOf(query)
    const filter: repo.AuditFilter = {
      keyPrefix: query.key_prefix,
      path: query.path,
      status: query.status,
      from: query.from ? iso(parseTime(query.from, 'from')) : undefined,
      to: query.to ? iso(parseTime(query.to, 'to')) : undefined,
    }
    if (query.account !== undefined)
      filter.accountId = (await iamRepo.findAccountByCustomerNumber(this.db, query.account))?.id ?? -1
    const total = await repo.countAudit(this.db, filter)
    const pag = pagination(page, total)
    const rows = await repo.listAudit(this.db, filter, page.limit, page.offset)
    return {
      entries: rows.map((r) => ({
        id: r.id,
        customer_number: r.customer_number ?? null,
        user_id: r.user_id,
        key_prefix: r.key_prefix,
        ip: r.ip,
        method: r.method,
        path: r.path,
        status: r.status,
        request_id: r.request_id,
        created_at: r.created_at,
      })),
      pagination: pag,
    }
  }

  async jobs(query: PageInput & { status?: string; kind?: string; account?: number }) {
    const page = pageOf(query)
    const filter: repo.JobFilter = { status: query.status, kind: query.kind }
    if (query.account !== undefined)
      filter.accountId = (await iamRepo.findAccountByCustomerNumber(this.db, query.account))?.id ?? -1
    const total = await repo.countJobs(this.db, filter)
    const pag = pagination(page, total)
    const rows = await repo.listJobs(this.db, filter, page.limit, page.offset)
    return { jobs: rows.map(jobView), pagination: pag }
  }

  async job(id: number) {
    const row = await findJob(this.db, id)
    if (!row) throw errors.adminJobNotFound()
    return jobView(row)
  }

  /**
   * Queues a failed job again with fresh attempts; refused while a job of the same key is queued (the key is unique
   * among queued jobs: that one does the work).
   */
  async retryJob(id: number) {
    const job = await this.job(id)
    let requeued: boolean
    try {
      requeued = await repo.requeueFailedJob(this.db, id, iso(this.clock.now()))
    } catch (err) {
      const key = isUniqueViolation(err) ? (await findJob(this.db, id))?.key : null
      if (key) throw errors.adminJobKeyQueued(key)
      throw err
    }
    if (!requeued) throw errors.adminJobNotRetryable(job.status)
    return this.job(id)
  }

  async outbox(query: PageInput & { account?: number; recipient?: string; kind?: string; status?: OutboxStatus }) {
    const page = pageOf(query)
    const filter: repo.OutboxFilter = { recipient: query.recipient, kind: query.kind, status: query.status }
    if (query.account !== undefined)
      filter.accountId = (await iamRepo.findAccountByCustomerNumber(this.db, query.account))?.id ?? -1
    const total = await repo.countOutbox(this.db, filter)
    const pag = pagination(page, total)
    const rows = await repo.listOutbox(this.db, filter, page.limit, page.offset)
    return { messages: rows.map(messageView), pagination: pag }
  }

  async message(id: number) {
    const row = await repo.findOutboxMessage(this.db, id)
    if (!row) throw errors.adminMessageNotFound()
    return messageView(row)
  }

  /**
   * Sends a message the relay refused (`failed`) again: a new attempt, queued as a job, which records a new outbox
   * message with what the relay answers this time. Answers the queued job.
   */
  async resendMessage(id: number) {
    const row = await repo.findOutboxMessage(this.db, id)
    if (!row) throw errors.adminMessageNotFound()
    if (row.status !== 'failed') throw errors.adminMessageNotResendable(row.status)
    // Caused by the operator's request alone: queued on the database itself.
    const jobId = await this.mail.queue(this.db, {
      to: row.recipient,
      subject: row.subject,
      text: row.text_body,
      html: row.html_body,
      kind: row.kind,
      accountId: row.account_id,
    })
    return this.job(jobId)
  }

  /** Quarantined jobs per kind (for the metrics). */
  async quarantinedJobs() {
    return (await quarantinedCounts(this.db)).map((r) => ({ kind: r.kind, n: Number(r.n) }))
  }

  /** Jobs per kind and status (for the metrics). */
  async jobCounts() {
    return (await repo.jobCounts(this.db)).map((r) => ({ kind: r.kind, status: r.status, n: Number(r.n) }))
  }

  /** Per kind, how long the oldest due job has waited since it became due, in seconds (for the metrics). */
  async dueJobs() {
    const now = this.clock.now()
    return (await repo.oldestDueJobs(this.db, iso(now))).map((r) => ({
      kind: r.kind,
      oldestSeconds: r.oldest ? Math.max(0, (now.getTime() - Date.parse(String(r.oldest))) / 1000) : 0,
    }))
  }

  /** Outbox messages the relay refused (`failed`), still kept in the outbox (for the metrics). */
  failedMessages(): Promise<number> {
    return repo.countOutbox(this.db, { status: 'failed' })
  }
}

function jobView(j: DecodedJob) {
  return {
    id: j.id,
    kind: j.kind,
    account_id: j.account_id,
    status: j.status,
    attempts: j.attempts,
    max_attempts: j.max_attempts,
    crashes: j.crashes,
    run_at: j.run_at,
    worker: j.locked_by,
    last_error: j.last_error,
    payload: j.payload,
    result: j.result,
    created_at: j.created_at,
    updated_at: j.updated_at,
    finished_at: j.finished_at,
  }
}

function messageView(m: OutboxMessage) {
  return {
    id: m.id,
    account_id: m.account_id,
    kind: m.kind,
    from: m.sender,
    to: m.recipient,
    subject: m.subject,
    text_body: m.text_body,
    html_body: m.html_body,
    status: m.status,
    status_detail: m.status_detail,
    created_at: m.created_at,
  }
}
