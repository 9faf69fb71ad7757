import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../../clock.js'
import { iso, ymd, ymdhms } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import {
  CertificateRejected,
  type CertificateAuthority,
  type Challenge,
  type IssuedCertificate,
  type ValidationMethod,
} from '../../drivers/ca/ca.js'
import { baseName } from '../../drivers/ca/names.js'
import type { Page } from '../../lib/paging.js'
import { pagination } from '../../lib/paging.js'
import * as repo from './certificates.repository.js'
import { emitEvent } from '../webhooks/webhook-events.js'
import type { Db } from '../../db/database.js'
import type { CertificateProduct, CertificateWithProduct } from './certificates.repository.js'
import { generateCsr, parseCsr, type CsrInput, type GeneratedCsr } from './csr.js'
import type { DryRun } from '../../lib/dry-run.js'

/** What certificates need from DNS hosting: the account's zone of a name, and its TXT records. */
export interface AccountDns {
  /** The account's domain whose zone holds `fqdn`, or null when the account does not host it. */
  zoneOf(accountId: number, fqdn: string): Promise<string | null>
  /** The TXT values published at `fqdn` in the account's zone (empty when none or not hosted). */
  txtValues(accountId: number, fqdn: string): Promise<string[]>
  /** Adds a TXT record with `value` at `fqdn` in the account's zone `zone`, keeping the other records. */
  addTxt(accountId: number, zone: string, fqdn: string, value: string): Promise<void>
  /** Removes the TXT record with `value` at `fqdn` from the account's zone `zone`, if it is there. */
  removeTxt(accountId: number, zone: string, fqdn: string, value: string): Promise<void>
}

/** The part of the orders service that certificates use. */
export interface OrderPlacer {
  createOrder(
    accountId: number,
    items: { type: 'certificate'; name: string; details: unknown; priceCents: number; description?: string }[],
  ): Promise<{ orderId: number }>
}

export interface OrderItemInput {
  id: number
  orderId: number
  accountId: number
  details: unknown
}

export interface RequestInput {
  csr: string
  validation_method: ValidationMethod
  approver_email?: string
  auto_setup_dns?: boolean
}

/** A product as the API shows it. */
export interface ProductView {
  id: number
  /** The same as `id`, under the name the order takes. */
  product_id: number
  name: string
  type: string
  validation: string
  max_domains: number
  wildcard: boolean
  duration_options: number[]
  prices: { duration: number; price: number }[]
}

/** The duration of an order that names none, as clients expect. */
const DEFAULT_DURATION_YEARS = 1

export const ISSUE_JOB = 'certificates.issue'
const MINUTE_MS = 60_000
/** How long a requested certificate waits for its validation before it fails. */
export const VALIDATION_WINDOW_MS = 7 * 24 * 60 * MINUTE_MS
/** Rechecks back off from one minute to one hour. */
const recheckDelay = (checks: number) => Math.min(60 * MINUTE_MS, MINUTE_MS * 2 ** Math.max(0, checks - 1))

/** Certificate products, orders, CSR generation, requests and issuance through the configured CA. */
export class CertificatesService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly ca: CertificateAuthority,
    private readonly orders: OrderPlacer,
    private readonly dns: () => AccountDns | null,
    private readonly log: Logger,
  ) {}

  /** The job that checks a requested certificate's validation and issues it once it passes. */
  readonly issueJob = defineJob({
    name: ISSUE_JOB,
    payload: Type.Object({ accountId: Type.Integer(), certificateId: Type.Integer() }),
    handle: ({ accountId, certificateId }) => this.validateAndIssue(accountId, certificateId),
  })

  /** The products that can be ordered. */
  async products(): Promise<ProductView[]> {
    return (await repo.listActiveProducts(this.db)).map(productView)
  }

  /** Orders a certificate package; the order's job creates it. A dry run checks the order and answers order id 0. */
  async order(
    accountId: number,
    input: { product_id: number; duration?: number },
    opts: DryRun = {},
  ): Promise<{ orderId: number }> {
    const product = await repo.findProduct(this.db, input.product_id)
    if (!product?.active) throw errors.certificateProductNotFound()
    const { durations } = product
    const duration = input.duration ?? DEFAULT_DURATION_YEARS
    if (!durations.includes(duration)) throw errors.certificateDuration(durations)
    if (opts.dryRun) return { orderId: 0 }
    return this.orders.createOrder(accountId, [
      {
        type: 'certificate',
        name: product.name,
        details: { product_id: product.id, duration },
        priceCents: product.price_cents * duration,
        description: `${product.name}, ${duration} year${duration === 1 ? '' : 's'}`,
      },
    ])
  }

  /** The order processor of `certificate` items: creates the package (once, however often it runs). */
  async processOrderItem(
    item: OrderItemInput,
  ): Promise<{ errors: { code: string; description: string }[]; result?: unknown }> {
    const existing = await repo.findByOrderItem(this.db, item.accountId, item.id)
    if (existing) return { errors: [], result: { certificate_id: existing.id } }
    const details = item.details as { product_id?: number; duration?: number }
    const product = details.product_id === undefined ? undefined : await repo.findProduct(this.db, details.product_id)
    if (!product) return { errors: [{ code: 'product_id', description: errors.certificateProductNotFound().message }] }
    const duration = details.duration ?? 1
    const now = this.clock.now()
    const endsAt = new Date(now)
    endsAt.setUTCFullYear(endsAt.getUTCFullYear() + duration)
    const id = await repo.insertCertificate(this.db, {
      account_id: item.accountId,
      product_id: product.id,
      order_id: item.orderId,
      order_item_id: item.id,
      duration,
      status: 'NEW',
      ends_at: iso(endsAt),
      created_at: iso(now),
      updated_at: iso(now),
    })
    return { errors: [], result: { certificate_id: id } }
  }

  /** A page of the account's certificates. */
  async list(accountId: number, page: Page, search?: string) {
    const { rows, total } = await repo.listOwned(this.db, accountId, { search, limit: page.limit, offset: page.offset })
    const pages = pagination(page, total)
    return { certificates: rows.map((r) => this.listItem(r)), pagination: pages }
  }

  /** One certificate of the account; another account's is `Certificate not found`. */
  async get(accountId: number, id: number) {
    const row = await repo.findOwned(this.db, accountId, id)
    if (!row) throw errors.certificateNotFound()
    return this.detail(row)
  }

  /** A new private key and a CSR for it; nothing is stored. */
  generateCsr(input: CsrInput): Promise<GeneratedCsr> {
    return generateCsr(input)
  }

  /**
   * Requests the certificate of a package for the names of `csr`: creates the CA's challenge, writes the
   * DNS validation records into the account's zones when asked to, and queues validation and issuance.
   * An issued certificate can be requested again (a reissue, e.g. for the second year of a package): the
   * current certificate stays until the new one replaces it.
   * A dry run checks everything and answers the certificate as it would be, storing and writing nothing.
   */
  async request(accountId: number, id: number, input: RequestInput, opts: DryRun = {}) {
    const row = await repo.findOwned(this.db, accountId, id)
    if (!row) throw errors.certificateNotFound()
    if (row.status === 'PEN') throw errors.certificateAlreadyRequested()
    const now = this.clock.now()
    if (new Date(row.ends_at).getTime() <= now.getTime()) throw errors.certificatePackageEnded()
    const approver = input.validation_method === 'email' ? input.approver_email?.trim() || null : null
    if (input.validation_method === 'email' && !approver) throw errors.approverEmailRequired()

    const csr = await parseCsr(input.csr)
    const product = await repo.findProduct(this.db, row.product_id)
    if (!product) throw errors.certificateProductNotFound()
    if (!product.wildcard && csr.names.some((n) => n.startsWith('*.'))) throw errors.csrWildcardNotCovered()
    if (csr.names.length > product.max_domains) throw errors.csrTooManyNames(product.max_domains)

    let challenge: Challenge
    try {
      challenge = await this.ca.createChallenge({
        names: csr.names,
        method: input.validation_method,
        approverEmail: approver,
      })
    } catch (err) {
      if (err instanceof CertificateRejected) throw errors.certificateRefused(err.message)
      throw err
    }

    const autoSetup = input.validation_method === 'dns' && input.auto_setup_dns === true
    const changes = {
      status: 'PEN' as const,
      common_name: csr.names[0],
      domains: JSON.stringify(csr.names),
      csr: csr.pem,
      validation_method: input.validation_method,
      approver_email: approver,
      auto_setup_dns: input.auto_setup_dns ? 1 : 0,
      challenge: JSON.stringify(challenge),
      validation_checks: 0,
      status_message: 'Waiting for validation',
      requested_at: iso(now),
      updated_at: iso(now),
    }
    if (opts.dryRun) {
      const wouldCreate = autoSetup ? await this.hostedRecordNames(accountId, challenge) : []
      return this.detail({ ...row, ...changes, domains: csr.names, challenge, dns_auto_setup: wouldCreate })
    }
    const created = autoSetup ? await this.publishRecords(accountId, challenge) : []
    const claimed = await repo.updateIfStatus(this.db, accountId, id, [row.status], {
      ...changes,
      dns_auto_setup: JSON.stringify(created),
    })
    if (!claimed) {
      await this.unpublishRecords(accountId, challenge, created)
      throw errors.certificateAlreadyRequested()
    }
    await this.jobs.enqueue(this.issueJob, { accountId, certificateId: id }, { accountId })
    return this.get(accountId, id)
  }

  /**
   * The job: checks the validation; when met, has the CA sign the certificate. While it is not met the
   * check is queued again, backing off, until the validation window closes.
   */
  async validateAndIssue(accountId: number, id: number): Promise<{ status: string }> {
    const row = await repo.findOwned(this.db, accountId, id)
    if (row?.status !== 'PEN' || !row.challenge || !row.csr) return { status: row?.status ?? 'missing' }
    const { challenge, domains: names, dns_auto_setup: created } = row
    const now = this.clock.now()
    const checks = row.validation_checks + 1

    const validation = await this.ca.validate({ accountId, names, challenge })
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
      const runAt = new Date(now.getTime() + recheckDelay(checks))
      await this.jobs.enqueue(this.issueJob, { accountId, certificateId: id }, { accountId, runAt })
      return { status: 'PEN' }
    }

    let issued: IssuedCertificate
    try {
      issued = await this.ca.issue({ csr: row.csr, names, notAfter: new Date(row.ends_at) })
    } catch (err) {
      if (!(err instanceof CertificateRejected)) throw err
      await this.fail(row, `The CA refused the request: ${err.message}`, challenge, created)
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
    await this.unpublishRecords(accountId, challenge, created)
    return { status: 'ACT' }
  }

  /**
   * Demo data: an issued certificate for `commonName` in the account, signed by the CA without a
   * validation (the demo account owns nothing to validate against).
   */
  async seedIssued(accountId: number, commonName: string): Promise<number> {
    const product = (await repo.listActiveProducts(this.db))[0]
    const now = this.clock.now()
    const endsAt = new Date(now)
    endsAt.setUTCFullYear(endsAt.getUTCFullYear() + 1)
    const { csr } = await generateCsr({
      common_name: commonName,
      organization: 'Demo B.V.',
      email: `admin@${baseName(commonName)}`,
      country: 'NL',
      state: 'Noord-Holland',
      locality: 'Amsterdam',
      key_type: 'ec',
    })
    const parsed = await parseCsr(csr)
    const issued = await this.ca.issue({ csr, names: parsed.names, notAfter: endsAt })
    return repo.insertCertificate(this.db, {
      account_id: accountId,
      product_id: product.id,
      duration: 1,
      status: 'ACT',
      common_name: parsed.names[0],
      domains: JSON.stringify(parsed.names),
      csr,
      validation_method: 'dns',
      certificate: issued.certificate,
      intermediate_certificate: issued.intermediate,
      serial_number: issued.serialNumber,
      valid_from: iso(issued.notBefore),
      valid_until: iso(issued.notAfter),
      ends_at: iso(endsAt),
      requested_at: iso(now),
      issued_at: iso(now),
      created_at: iso(now),
      updated_at: iso(now),
    })
  }

  private async fail(
    row: CertificateWithProduct,
    message: string,
    challenge: Challenge,
    created: string[],
  ): Promise<void> {
    const now = this.clock.now()
    await this.db.transaction().execute(async (trx) => {
      const done = await repo.updateIfStatus(trx, row.account_id, row.id, ['PEN'], {
        status: 'ERR',
        status_message: message,
        updated_at: iso(now),
      })
      const data = () => this.eventData(trx, row.account_id, row.id)
      if (done) await emitEvent(trx, row.account_id, 'certificate.failed', data, now)
    })
    await this.unpublishRecords(row.account_id, challenge, created)
  }

  /** A certificate as `GET /certificates/{id}` shows it, read in the transaction that changed it. */
  private async eventData(trx: Db, accountId: number, id: number): Promise<Record<string, unknown>> {
    return { ...this.detail((await repo.findOwned(trx, accountId, id))!) }
  }

  /** Writes the challenge's TXT records into the account's zones that hold them; returns the names written. */
  private async publishRecords(accountId: number, challenge: Challenge): Promise<string[]> {
    const dns = this.dns()
    if (!dns) return []
    const created: string[] = []
    for (const record of challenge.dnsRecords) {
      const zone = await dns.zoneOf(accountId, record.name)
      if (!zone) continue
      await dns.addTxt(accountId, zone, record.name, record.value)
      created.push(record.name)
    }
    return created
  }

  /** The challenge's TXT record names that lie in zones the account hosts here. */
  private async hostedRecordNames(accountId: number, challenge: Challenge): Promise<string[]> {
    const dns = this.dns()
    if (!dns) return []
    const hosted: string[] = []
    for (const record of challenge.dnsRecords) if (await dns.zoneOf(accountId, record.name)) hosted.push(record.name)
    return hosted
  }

  /** Removes the validation records hostapi wrote; a failure here must not undo an issued certificate. */
  private async unpublishRecords(accountId: number, challenge: Challenge, created: string[]): Promise<void> {
    const dns = this.dns()
    if (!dns) return
    for (const record of challenge.dnsRecords.filter((r) => created.includes(r.name))) {
      try {
        const zone = await dns.zoneOf(accountId, record.name)
        if (zone) await dns.removeTxt(accountId, zone, record.name, record.value)
      } catch (err) {
        this.log.warn({ err, accountId, record: record.name }, 'could not remove a certificate validation record')
      }
    }
  }

  private listItem(row: CertificateWithProduct) {
    return {
      id: row.id,
      product_id: row.product_id,
      product: row.product_name,
      common_name: row.common_name,
      domains: row.domains,
      requested: row.status !== 'NEW',
      certificate_status:
        row.status === 'ACT' && row.valid_until && new Date(row.valid_until) <= this.clock.now() ? 'EXP' : row.status,
      validation_method: row.validation_method,
      order_id: row.order_id,
      created: ymdhms(new Date(row.created_at)),
      valid_until: row.valid_until ? ymdhms(new Date(row.valid_until)) : null,
      end_date: ymd(new Date(row.ends_at)),
    }
  }

  private detail(row: CertificateWithProduct) {
    const { challenge, dns_auto_setup: created } = row
    return {
      ...this.listItem(row),
      duration: row.duration,
      approver_email: row.approver_email,
      auto_setup_dns: row.auto_setup_dns === 1,
      validation: challenge
        ? {
            method: challenge.method,
            dns_records: challenge.dnsRecords.map((r) => ({ ...r, auto_created: created.includes(r.name) })),
            http_files: challenge.httpFiles,
            approver_email: challenge.approverEmail,
          }
        : null,
      status_message: row.status_message,
      csr: row.csr,
      certificate: row.certificate,
      intermediate_certificate: row.intermediate_certificate,
      serial_number: row.serial_number,
      valid_from: row.valid_from ? ymdhms(new Date(row.valid_from)) : null,
      requested_at: row.requested_at ? ymdhms(new Date(row.requested_at)) : null,
      issued_at: row.issued_at ? ymdhms(new Date(row.issued_at)) : null,
    }
  }
}

function productView(p: CertificateProduct): ProductView {
  return {
    id: p.id,
    product_id: p.id,
    name: p.name,
    type: p.kind,
    validation: p.validation,
    max_domains: p.max_domains,
    wildcard: p.wildcard === 1,
    duration_options: [...p.durations],
    prices: p.durations.map((duration) => ({ duration, price: (p.price_cents * duration) / 100 })),
  }
}
