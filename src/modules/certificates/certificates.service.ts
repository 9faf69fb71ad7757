import type { Kysely } from 'kysely'
import type { WorkFaults } from '../../ops/faults.js'
import type { Logger } from 'pino'
import type { Clock } from '../../clock.js'
import { iso, ymd, ymdhms } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import {
  CertificateRejected,
  type CertificateAuthority,
  type Challenge,
  type ValidationMethod,
} from '../../drivers/ca/ca.js'
import { baseName } from '../../drivers/ca/names.js'
import type { Page } from '../../lib/paging.js'
import { pagination } from '../../lib/paging.js'
import { amount } from '../../lib/money.js'
import * as repo from './certificates.repository.js'
import type { Db } from '../../db/database.js'
import type { CertificateProduct, CertificateWithProduct } from './certificates.repository.js'
import { generateCsr, parseCsr, type CsrInput, type GeneratedCsr } from './csr.js'
import type { DryRun } from '../../lib/dry-run.js'
import type { JobRunner } from '../../jobs/runner.js'
import { crashPoint } from '../../ops/crash-points.js'
import type { AccountDns } from './account-dns.js'
import { CertificateIssuance } from './issuance.service.js'
import { ValidationRecords } from './validation-records.js'
import { CertificateRenewal, type Reissue } from './renewal.service.js'
import { present } from '../../lib/invariant.js'

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

/** What CertificatesService is built on. */
export interface CertificatesServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  ca: CertificateAuthority
  orders: OrderPlacer
  /** The account's zones hosted here, where DNS validation records are written. */
  dns: AccountDns
  log: Logger
  /** Days before a leaf's expiry that it is renewed; null for a CA whose leaves last the paid term. */
  renewDays?: number | null
  /** Sandbox fault injection into asynchronous work; null in production. */
  faults?: WorkFaults | null
}

/** Certificate products, orders, CSR generation, requests and issuance through the configured CA. */
export class CertificatesService {
  private readonly records: ValidationRecords
  /** Validation and issuance of requested certificates (the job). */
  readonly issuance: CertificateIssuance
  /** Renewal of leaves that end before the paid term (the recurring scan). */
  readonly renewal: CertificateRenewal

  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly ca: CertificateAuthority
  private readonly orders: OrderPlacer

  constructor(deps: CertificatesServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.ca = deps.ca
    this.orders = deps.orders
    const { db, clock, jobs, ca, log } = deps
    this.records = new ValidationRecords({ dns: deps.dns, log })
    this.issuance = new CertificateIssuance({
      db,
      clock,
      jobs,
      ca,
      records: this.records,
      log,
      eventData: (trx, accountId, id) => this.eventData(trx, accountId, id),
      faults: deps.faults,
    })
    const reissue: Reissue = (accountId, id, input) => this.request(accountId, id, input)
    this.renewal = new CertificateRenewal({ db, clock, jobs, reissue, renewDays: deps.renewDays ?? null, log })
  }

  /** The products that can be ordered. */
  async products(): Promise<ProductView[]> {
    return (await repo.listActiveProducts(this.db)).map(productView)
  }

  /**
   * Orders a certificate package; the order's job creates it. Answers the order with what it charges.
   * A dry run checks the order and answers order id 0.
   */
  async order(accountId: number, input: { product_id: number; duration?: number }, opts: DryRun = {}) {
    const product = await repo.findProduct(this.db, input.product_id)
    if (!product?.active) throw errors.certificateProductNotFound()
    const { durations } = product
    const duration = input.duration ?? DEFAULT_DURATION_YEARS
    if (!durations.includes(duration)) throw errors.certificateDuration(durations)
    const priceCents = product.price_cents * duration
    const placed = opts.dryRun
      ? { orderId: 0 }
      : await this.orders.createOrder(accountId, [
          {
            type: 'certificate',
            name: product.name,
            details: { product_id: product.id, duration },
            priceCents,
            description: `${product.name}, ${duration} year${duration === 1 ? '' : 's'}`,
          },
        ])
    return {
      order_id: placed.orderId,
      status: 'open',
      product_id: product.id,
      product: product.name,
      duration,
      price: amount(priceCents),
    }
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
        accountId,
        names: csr.names,
        method: input.validation_method,
        approverEmail: approver,
        csr: csr.pem,
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
      const wouldCreate = autoSetup ? await this.records.hostedNames(accountId, challenge) : []
      return this.detail({ ...row, ...changes, domains: csr.names, challenge, dns_auto_setup: wouldCreate })
    }
    const created = autoSetup ? await this.records.publish(accountId, challenge) : []
    // The certificate becomes PEN with the job that checks it, or stays as it was.
    const claimed = await this.db.transaction().execute(async (trx) => {
      const changed = await repo.updateIfStatus(trx, accountId, id, [row.status], {
        ...changes,
        dns_auto_setup: JSON.stringify(created),
      })
      if (changed) await this.issuance.queue(trx, accountId, id)
      return changed
    })
    crashPoint('certificates.request.committed')
    this.jobs.poke()
    if (!claimed) {
      await this.records.unpublish(accountId, challenge, created)
      throw errors.certificateAlreadyRequested()
    }
    return this.get(accountId, id)
  }

  /**
   * Demo data: a certificate for `commonName` in the account. A CA that signs without a challenge signs it
   * (the demo account owns nothing a public CA could validate); with any other CA (ACME) it is a package
   * awaiting its request, as an order leaves one (status NEW): the seed sends nothing to the CA.
   */
  async seedDemo(accountId: number, commonName: string): Promise<{ id: number; issued: boolean }> {
    const product = (await repo.listActiveProducts(this.db))[0]
    const now = this.clock.now()
    const endsAt = new Date(now)
    endsAt.setUTCFullYear(endsAt.getUTCFullYear() + 1)
    if (!this.ca.signsWithoutChallenge) {
      const id = await repo.insertCertificate(this.db, {
        account_id: accountId,
        product_id: product.id,
        duration: 1,
        status: 'NEW',
        ends_at: iso(endsAt),
        created_at: iso(now),
        updated_at: iso(now),
      })
      return { id, issued: false }
    }
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
    const id = await repo.insertCertificate(this.db, {
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
    return { id, issued: true }
  }

  private listItem(row: CertificateWithProduct) {
    return {
      id: row.id,
      product_id: row.product_id,
      product: row.product_name,
      common_name: row.common_name,
      domain: row.common_name ?? '',
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

  /** A certificate as `GET /certificates/{id}` shows it, read in the transaction that changed it. */
  async eventData(trx: Db, accountId: number, id: number): Promise<Record<string, unknown>> {
    return { ...this.detail(present(await repo.findOwned(trx, accountId, id), `certificate ${id} just written`)) }
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
      warning: autoSetupWarning(row),
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

/**
 * While a certificate asked for `auto_setup_dns` waits for validation: which of its TXT records hostapi could not
 * write (their names are in no zone the account hosts here), so the customer publishes them; otherwise null.
 */
function autoSetupWarning(row: CertificateWithProduct): string | null {
  if (row.status !== 'PEN' || row.auto_setup_dns !== 1 || !row.challenge) return null
  const missing = row.challenge.dnsRecords.filter((r) => !row.dns_auto_setup.includes(r.name)).map((r) => r.name)
  if (missing.length === 0) return null
  const which = missing.length === 1 ? 'this TXT record' : 'these TXT records'
  return `Automatic DNS setup could not write ${missing.join(', ')}: publish ${which} yourself`
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
