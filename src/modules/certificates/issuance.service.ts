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

/** The job kind that validates and issues a requested certificate. */
export const ISSUE_JOB = 'certificates.issue'
// A CA may be unreachable for a while: 20 attempts back off from 1 s to 5 min, about 75 minutes in all.
const ISSUE_ATTEMPTS = 20
const MINUTE_MS = 60_000
/** How long a requested certificate waits for its validation before it fails. */
export const VALIDATION_WINDOW_MS = 7 * 24 * 60 * MINUTE_MS
/** Rechecks back off from one minute to one hour. */
const recheckDelay = (checks: number) => Math.min(60 * MINUTE_MS, MINUTE_MS * 2 ** Math.max(0, checks - 1))

/** The flow of a requested certificate: its validation checks, then issuance by the CA, through the job queue. */
export class CertificateIssuance {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly ca: CertificateAuthority,
    private readonly records: ValidationRecords,
  ) {}

  /** The job that checks a requested certificate's validation and issues it once it passes. */
  readonly issueJob = defineJob({
    name: ISSUE_JOB,
    payload: Type.Object({ accountId: Type.Integer(), certificateId: Type.Integer() }),
    handle: ({ accountId, certificateId }) => this.validateAndIssue(accountId, certificateId),
  })

  /** Queues the check of a certificate that has just become `PEN`. */
  async queue(accountId: number, certificateId: number, runAt?: Date): Promise<void> {
    await this.jobs.enqueue(
      this.issueJob,
      { accountId, certificateId },
      { accountId, runAt, maxAttempts: ISSUE_ATTEMPTS },
    )
  }

  /**
   * The job: checks the validation; when met, has the CA sign the certificate. While it is not met the
   * check is queued again, backing off, until the validation window closes.
   */
  async validateAndIssue(accountId: number, id: number): Promise<{ status: string }> {
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
      if (!(err instanceof CertificateRejected)) return this.waitForCa(row, err)
      await this.fail(row, `The CA refused the request: ${err.message}`, challenge, created)
      return { status: 'ERR' }
    }
    if (validation.challenge) {
      // The CA made its challenge now (an ACME order): it is kept with the certificate, its records published.
      challenge = validation.challenge
      if (row.auto_setup_dns === 1 && challenge.method === 'dns')
        created = [...new Set([...created, ...(await this.records.publish(accountId, challenge))])]
      await repo.updateIfStatus(this.db, accountId, id, ['PEN'], {
        challenge: JSON.stringify(challenge),
        dns_auto_setup: JSON.stringify(created),
        updated_at: iso(now),
      })
    }
    if (!validation.valid) {
      if (now.getTime() - new Date(row.requested_at ?? row.updated_at).getTime() >= VALIDATION_WINDOW_MS) {
        await this.fail(row, `Validation failed: ${validation.reason}`, challenge, created)
        return { status: 'ERR' }
      }
      await repo.updateIfStatus(this.db, accountId, id, ['PEN'], {
        validation_checks: checks,
        status_message: validation.reason,
        updated_at: iso(now),
      })
      await this.queue(accountId, id, new Date(now.getTime() + (validation.retryInMs ?? recheckDelay(checks))))
      return { status: 'PEN' }
    }

    let issued: IssuedCertificate
    try {
      issued = await this.ca.issue({ csr: row.csr, names, notAfter: new Date(row.ends_at), challenge })
    } catch (err) {
      if (!(err instanceof CertificateRejected)) return this.waitForCa(row, err)
      await this.fail(row, `The CA refused the request: ${err.message}`, challenge, created)
      return { status: 'ERR' }
    }
    await repo.updateIfStatus(this.db, accountId, id, ['PEN'], {
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
    await this.records.unpublish(accountId, challenge, created)
    return { status: 'ACT' }
  }

  /**
   * The CA could not be reached or answered with a passing problem: the certificate says so, and the error
   * fails the job's attempt, which the job queue retries with back-off (and shows the operator).
   */
  private async waitForCa(row: CertificateWithProduct, err: unknown): Promise<never> {
    const message = err instanceof Error ? err.message : String(err)
    await repo.updateIfStatus(this.db, row.account_id, row.id, ['PEN'], {
      status_message: `Waiting for the CA: ${message}`.slice(0, 1000),
      updated_at: iso(this.clock.now()),
    })
    throw err
  }

  private async fail(
    row: CertificateWithProduct,
    message: string,
    challenge: Challenge,
    created: string[],
  ): Promise<void> {
    await repo.updateIfStatus(this.db, row.account_id, row.id, ['PEN'], {
      status: 'ERR',
      status_message: message,
      updated_at: iso(this.clock.now()),
    })
    await this.records.unpublish(row.account_id, challenge, created)
  }
}
