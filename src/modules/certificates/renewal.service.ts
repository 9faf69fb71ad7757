import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { Type } from 'typebox'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import type { ValidationMethod } from '../../drivers/ca/ca.js'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import * as repo from './certificates.repository.js'

/** The job kind of the recurring renewal scan. */
export const RENEW_JOB = 'certificates.renew'
const DAY_MS = 86_400_000
const SCAN_EVERY_MS = 60 * 60_000
// One scan starts at most this many renewals; the next scan, an hour later, takes the rest.
const SCAN_LIMIT = 100

/** What a renewal asks: the certificate requested again with what its last request stored. */
export type Reissue = (
  accountId: number,
  id: number,
  input: { csr: string; validation_method: ValidationMethod; approver_email?: string; auto_setup_dns?: boolean },
) => Promise<unknown>

/** What CertificateRenewal is built on. */
export interface CertificateRenewalDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  reissue: Reissue
  /** Days before a leaf's expiry that it is renewed; null when the CA's leaves last the paid term (no renewals). */
  renewDays: number | null
  log: Logger
}

/**
 * Renewal of a certificate before its leaf expires while the paid term lasts longer (an ACME leaf lasts about
 * 90 days, a package one year or more): an hourly scan requests it again with its stored CSR and method. With
 * `dns` and `auto_setup_dns` that runs to the new leaf by itself; otherwise the certificate shows the new
 * challenge and waits for the customer. Until the new leaf is issued the old one stays on the certificate.
 */
export class CertificateRenewal {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly reissue: Reissue
  private readonly renewDays: number | null
  private readonly log: Logger

  constructor(deps: CertificateRenewalDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.reissue = deps.reissue
    this.renewDays = deps.renewDays
    this.log = deps.log
  }

  /** The hourly scan. */
  readonly renewJob = defineJob({
    name: RENEW_JOB,
    payload: Type.Null(),
    recurring: true,
    handle: async () => ({ started: await this.renewDue() }),
  })

  /** Schedules the hourly scan (one across every instance), when this installation renews certificates. */
  async schedule(): Promise<void> {
    if (this.renewDays === null) return
    await this.jobs.every(this.renewJob, SCAN_EVERY_MS)
  }

  /** Requests again every certificate due for renewal now; returns how many renewals it started. */
  async renewDue(): Promise<number> {
    if (this.renewDays === null) return 0
    const before = iso(new Date(this.clock.now().getTime() + this.renewDays * DAY_MS))
    let started = 0
    for (const row of await repo.listRenewable(this.db, before, SCAN_LIMIT)) {
      const { account_id: accountId, id } = row
      try {
        await this.reissue(accountId, id, {
          csr: row.csr ?? '',
          validation_method: row.validation_method as ValidationMethod,
          approver_email: row.approver_email ?? undefined,
          auto_setup_dns: row.auto_setup_dns === 1,
        })
        started++
        this.log.info({ accountId, certificateId: id, validUntil: row.valid_until }, 'renewing a certificate')
      } catch (err) {
        // One certificate that cannot be requested again (another scan took it, its CSR is refused now) must not
        // hold up the others; it is tried again at the next scan while it stays due.
        this.log.warn({ err, accountId, certificateId: id }, 'could not renew a certificate')
      }
    }
    return started
  }
}
