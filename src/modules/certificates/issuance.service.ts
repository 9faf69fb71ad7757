import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import {
  CertificateRejected,
  type CertificateAuthority,
  type Challenge,
  type IssuedCertificate,
  type ValidationResult,
} from '../../drivers/ca/ca.js'
import * as repo from './certificates.repository.js'
import type { CertificateWithProduct } from './certificates.repository.js'
import type { ValidationRecords } from './validation-records.js'
import { insertAuditEntry } from '../../db/audit.repository.js'
import type { Logger } from 'pino'
import type { Db } from '../../db/database.js'
import { emitEvent } from '../webhooks/webhook-events.js'
import type { WorkFaults } from '../../ops/faults.js'

/** The job kind that validates and issues a requested certificate. */
export const ISSUE_JOB = 'certificates.issue'
// A CA may be unreachable for a while: 20 attempts back off from 1 s to 5 min, about 75 minutes in all.
const ISSUE_ATTEMPTS = 20
const MINUTE_MS = 60_000
/** How long a requested certificate waits for its validation before it fails. */
export const VALIDATION_WINDOW_MS = 7 * 24 * 60 * MINUTE_MS
const WAITING_FOR_CA = 'Waiting for the CA: '
/** What the CA says of a request the sandbox's fault injection refuses, when the fault sets no text. */
export const CA_FAULT = 'The CA declined to issue the certificate'
/** The audit log's status for a certificate that ended in `ERR` (refused by the CA, or never validated). */
export const AUDIT_FAILED = 422
/** The audit log's status for issuance that waits on a CA it cannot reach (or that answers a passing problem). */
export const AUDIT_WAITING_FOR_CA = 503
/** Rechecks back off from one minute to one hour. */
const recheckDelay = (checks: number) => Math.min(60 * MINUTE_MS, MINUTE_MS * 2 ** Math.max(0, checks - 1))

/** What CertificateIssuance is built on. */
export interface CertificateIssuanceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  ca: CertificateAuthority
  records: ValidationRecords
  log: Logger
  /** A certificate as `GET /certificates/{id}` shows it, read in the transaction that changed it. */
  eventData: (trx: Db, accountId: number, id: number) => Promise<Record<string, unknown>>
  /** Sandbox fault injection into the CA's answers (`ca.issue`); none in production. */
  faults?: WorkFaults | null
}

/** The flow of a requested certificate: its validation checks, then issuance by the CA, through the job queue. */
export class CertificateIssuance {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly ca: CertificateAuthority
  private readonly records: ValidationRecords
  private readonly log: Logger
  private readonly eventData: (trx: Db, accountId: number, id: number) => Promise<Record<string, unknown>>
  private readonly faults: WorkFaults | null

  constructor(deps: CertificateIssuanceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.ca = deps.ca
    this.records = deps.records
    this.log = deps.log
    this.eventData = deps.eventData
    this.faults = deps.faults ?? null
  }

  /** The job that checks a requested certificate's validation and issues it once it passes. */
  readonly issueJob = defineJob({
    name: ISSUE_JOB,
    payload: Type.Object({ accountId: Type.Integer(), certificateId: Type.Integer() }),
    handle: ({ accountId, certificateId }, { job }) => this.validateAndIssue(accountId, certificateId, job.id),
  })

  /** Queues the check of a certificate that is `PEN`, in the transaction that made it so (or counted its check). */
  async queue(trx: Db, accountId: number, certificateId: number, runAt?: Date): Promise<void> {
    await this.jobs.enqueue(
      this.issueJob,
      { accountId, certificateId },
      { trx, accountId, runAt, maxAttempts: ISSUE_ATTEMPTS, key: `certificate:${certificateId}` },
    )
  }

  /**
   * The job: checks the validation; when met, has the CA sign the certificate. While it is not met the
   * check is queued again, backing off, until the validation window closes.
   */
  async validateAndIssue(accountId: number, id: number, jobId?: number): Promise<{ status: string }> {
    const row = await repo.findOwned(this.db, accountId, id)
    if (row?.status !== 'PEN' || !row.challenge || !row.csr) return { status: row?.status ?? 'missing' }
    const { domains: names } = row
    let { challenge, dns_auto_setup: created } = row
    const now = this.clock.now()
    const checks = row.validation_checks + 1

    let validation: ValidationResult
    try {
      validation = await this.ca.validate({ accountId, names, challenge })
    } catch (err) {
      if (!(err instanceof CertificateRejected)) return this.waitForCa(row, err, jobId)
      await this.fail(row, `The CA refused the request: ${err.message}`, challenge, created, jobId)
      return { status: 'ERR' }
    }
    if (validation.challenge) {
      // The CA made its challenge now (an ACME order, or a new one after the CA's check of the last failed): it is
      // kept with the certificate, its records published, and the last order's values that it no longer has removed.
      const previous = challenge
      challenge = validation.challenge
      if (row.auto_setup_dns === 1 && challenge.method === 'dns') {
        const kept = (r: Challenge['dnsRecords'][number]) =>
          challenge.dnsRecords.some((n) => n.name === r.name && n.value === r.value)
        const stale = previous.dnsRecords.filter((r) => !kept(r))
        if (stale.length) await this.records.unpublish(accountId, { ...previous, dnsRecords: stale }, created)
        created = [...new Set([...created, ...(await this.records.publish(accountId, challenge))])]
      }
      await repo.updateIfStatus(this.db, accountId, id, ['PEN'], {
        challenge: JSON.stringify(challenge),
        dns_auto_setup: JSON.stringify(created),
        updated_at: iso(now),
      })
    }
    if (!validation.valid) {
      if (now.getTime() - new Date(row.requested_at ?? row.updated_at).getTime() >= VALIDATION_WINDOW_MS) {
        await this.fail(row, `Validation failed: ${validation.reason}`, challenge, created, jobId)
        return { status: 'ERR' }
      }
      const runAt = new Date(now.getTime() + (validation.retryInMs ?? recheckDelay(checks)))
      await this.db.transaction().execute(async (trx) => {
        const counted = await repo.updateIfStatus(trx, accountId, id, ['PEN'], {
          validation_checks: checks,
          status_message: validation.reason,
          updated_at: iso(now),
        })
        if (counted) await this.queue(trx, accountId, id, runAt)
      })
      return { status: 'PEN' }
    }

    let issued: IssuedCertificate
    try {
      const fault = await this.faults?.('ca.issue', accountId, {
        certificate: String(id),
        domain: row.common_name ?? names[0] ?? '',
      })
      if (fault) throw new CertificateRejected(fault.status_description ?? CA_FAULT)
      issued = await this.ca.issue({ csr: row.csr, names, notAfter: new Date(row.ends_at), challenge })
    } catch (err) {
      if (!(err instanceof CertificateRejected)) return this.waitForCa(row, err, jobId)
      await this.fail(row, `The CA refused the request: ${err.message}`, challenge, created, jobId)
      return { status: 'ERR' }
    }
    await this.db.transaction().execute(async (trx) => {
      const done = await repo.updateIfStatus(trx, accountId, id, ['PEN'], {
        status: 'ACT',
        validation_checks: checks,
        certificate: issued.certificate,
        intermediate_certificate: issued.intermediate,
        serial_number: issued.serialNumber,
        valid_from: iso(issued.notBefore),
        valid_until: iso(issued.notAfter),
        status_message: null,
        issued_at: iso(now),
        updated_at: iso(now),
      })
      if (done) await emitEvent(trx, accountId, 'certificate.issued', () => this.eventData(trx, accountId, id), now)
    })
    await this.records.unpublish(accountId, challenge, created)
    return { status: 'ACT' }
  }

  /**
   * The CA could not be reached or answered with a passing problem: the certificate says so, and the error
   * fails the job's attempt, which the job queue retries with back-off (and shows the operator). The audit log
   * records the start of the wait, not every attempt of it.
   */
  private async waitForCa(row: CertificateWithProduct, err: unknown, jobId?: number): Promise<never> {
    const message = err instanceof Error ? err.message : String(err)
    const waiting = row.status_message?.startsWith(WAITING_FOR_CA) === true
    const changed = await repo.updateIfStatus(this.db, row.account_id, row.id, ['PEN'], {
      status_message: `${WAITING_FOR_CA}${message}`.slice(0, 1000),
      updated_at: iso(this.clock.now()),
    })
    if (changed && !waiting) await this.audit(row, AUDIT_WAITING_FOR_CA, jobId)
    throw err
  }

  /**
   * A row in the audit log for what the job did to a certificate: method `JOB`, the certificate's path in the API,
   * a status that tells the outcome, and the job as the request id. A failed write is logged, not thrown.
   */
  private async audit(row: CertificateWithProduct, status: number, jobId?: number): Promise<void> {
    try {
      await insertAuditEntry(this.db, {
        account_id: row.account_id,
        user_id: null,
        key_prefix: null,
        ip: '',
        method: 'JOB',
        path: `/api/v2/certificates/${row.id}`,
        status,
        request_id: jobId === undefined ? ISSUE_JOB : `job-${jobId}`,
        created_at: iso(this.clock.now()),
      })
    } catch (err) {
      this.log.error({ err, certificateId: row.id }, 'audit log write failed')
    }
  }

  private async fail(
    row: CertificateWithProduct,
    message: string,
    challenge: Challenge,
    created: string[],
    jobId?: number,
  ): Promise<void> {
    const now = this.clock.now()
    const failed = await this.db.transaction().execute(async (trx) => {
      const done = await repo.updateIfStatus(trx, row.account_id, row.id, ['PEN'], {
        status: 'ERR',
        status_message: message,
        updated_at: iso(now),
      })
      const data = () => this.eventData(trx, row.account_id, row.id)
      if (done) await emitEvent(trx, row.account_id, 'certificate.failed', data, now)
      return done
    })
    if (failed) await this.audit(row, AUDIT_FAILED, jobId)
    await this.records.unpublish(row.account_id, challenge, created)
  }
}
