import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { ymd } from '../../../clock.js'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../../jobs/runner.js'
import type { DB } from '../../../db/tables.js'
import { ApiError, errors } from '../../../errors.js'
import type { RegistryCheck, RegistryDriver, RegistryResult } from '../../../drivers/registry/registry.js'
import type { ContactsService, Role } from '../contacts/contacts.service.js'
import type { DnsService } from '../dns/dns.service.js'
import type { DnsTemplatesService } from '../templates/dns-templates.service.js'
import { STATUS, type DomainsService } from '../domains.service.js'
import type { ZoneChange } from '../../../lib/dns/zone-serial.js'
import type { ZoneChanges } from '../dns/zone-delivery.js'
import type { Db } from '../../../db/database.js'
import { crashPoint } from '../../../ops/crash-points.js'
import type { WorkFaults } from '../../../ops/faults.js'
import type { ExtensionsService } from '../extensions/extensions.service.js'
import type { NameserversService } from '../nameservers/nameservers.service.js'
import type {
  OrderItemError,
  OrderItemForProcessing,
  OrderItemProcessor,
  OrdersService,
} from '../../orders/orders.service.js'
import type { DryRun } from '../../../lib/dry-run.js'
import { present } from '../../../lib/invariant.js'

/** The availability of a name, as `GET /domains/availability/{domain}` shows it. */
export interface Availability {
  domain: string
  status: 'available' | 'unavailable' | 'transfer' | 'invalid'
  is_premium: boolean
  premium_price: { currency: string; register: number; renew: number } | null
}

/** The body of `POST /domains/order`. */
export interface DomainOrderInput {
  domain: string
  type?: 'register' | 'transfer'
  transfer_code?: string | null
  accept_premium_price?: number | null
  nameserver?: string | null
  dns_template_id?: number | null
  profile?: Partial<Record<Role, number | null>>
  period?: number
}

/** What a domain order item keeps in `details`. */
interface DomainItemDetails {
  type: 'register' | 'transfer'
  transfer_code: string | null
  nameserver: string | null
  dns_template_id: number | null
  profile: Partial<Record<Role, number | null>>
  period: number
}

/** The details of a renewal order item: the renewal date it extends, so a retried job renews once. */
interface RenewalDetails {
  type: 'renew'
  from: string
  period: number
}

/** The description of a registration the sandbox's fault injection refuses, when the fault sets no text. */
export const REGISTRY_REFUSED = 'The registry refused the request'

/** The job that renews a domain on its renewal date. */
export const RENEW_JOB = 'domains.renew'

/** What DomainOrdersService is built on. */
export interface DomainOrdersServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  registry: RegistryDriver
  /** Places and reads orders; this service is the processor of their domain items (OrderProcessingService). */
  orders: OrdersService
  domains: DomainsService
  dns: DnsService
  extensions: ExtensionsService
  nameservers: NameserversService
  contacts: ContactsService
  dnsTemplates: DnsTemplatesService
  zones: ZoneChanges
  /** Sandbox fault injection into the registry's answers (`registry.register`); none in production. */
  faults?: WorkFaults | null
}

/**
 * Availability checks, domain orders, the order processor that turns a domain order into a domain, and
 * renewals: on its renewal date an active domain is renewed for a year through an order of its own (charged).
 */
export class DomainOrdersService implements OrderItemProcessor {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly registry: RegistryDriver

  constructor(private readonly deps: DomainOrdersServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.registry = deps.registry
  }

  /** The job that renews a domain on its renewal date. */
  readonly renewJob = defineJob({
    name: RENEW_JOB,
    payload: Type.Object({ domainId: Type.Integer() }),
    handle: ({ domainId }) => this.renewDue(domainId),
  })

  /** Queues the renewal of a domain for its renewal date, in the transaction that sets the date. */
  async scheduleRenewal(trx: Db, accountId: number, domainId: number, renewalDate: string): Promise<void> {
    const runAt = new Date(`${renewalDate}T00:00:00.000Z`)
    await this.jobs.enqueue(this.renewJob, { domainId }, { trx, accountId, runAt })
  }

  /** The renewal job: an active domain whose renewal date has come is renewed for a year by a charged order. */
  async renewDue(domainId: number): Promise<{ orderId: number | null }> {
    const d = await this.deps.domains.findForJob(domainId)
    // A cancelled domain ends instead; one renewed otherwise has its own job for the new date.
    if (!d || d.status !== STATUS.active.status || d.renewal_date > ymd(this.clock.now())) return { orderId: null }
    const tld = await this.deps.extensions.forDomain(d.name)
    const details: RenewalDetails = { type: 'renew', from: d.renewal_date, period: 1 }
    const { orderId } = await this.deps.orders.createOrder(d.account_id, [
      {
        type: 'domain',
        name: d.name,
        details,
        priceCents: tld?.renew_cents ?? 0,
        description: `Domain ${d.name}: renewal, 1 year`,
      },
    ])
    return { orderId }
  }

  /** Whether a name can be registered or transferred, with its premium price when it has one. */
  async availability(raw: string | undefined): Promise<Availability> {
    let text = (raw ?? '').trim().toLowerCase()
    if (!text) throw errors.noDomainSet()
    if (text.endsWith('.') && text.slice(0, -1).includes('.')) text = text.slice(0, -1)
    const labels = text.split('.')
    if (labels.length < 2 || labels[labels.length - 1] === '') throw errors.emptyExtension()
    const name = this.deps.domains.names.registrable(text)
    const invalid: Availability = { domain: text, status: 'invalid', is_premium: false, premium_price: null }
    if (!name || !(await this.deps.extensions.forDomain(name))) return invalid
    const check = await this.check(name)
    return {
      domain: name,
      status: check.status,
      is_premium: check.premium !== null,
      premium_price: check.premium
        ? { currency: 'EUR', register: check.premium.registerCents / 100, renew: check.premium.renewCents / 100 }
        : null,
    }
  }

  /**
   * The registry's answer for a registrable name, except that a name at, above or below a domain any account
   * holds here is `unavailable` (whatever a registry would say), so no account can take over another's zone.
   */
  private async check(name: string): Promise<RegistryCheck> {
    if ((await this.deps.domains.overlapping(name)).length > 0) return { status: 'unavailable', premium: null }
    return this.registry.check(name)
  }

  /**
   * Validates a domain order, stores and charges it (unless `charge: false`); the domain is provisioned by the order job.
   * A dry run checks everything (the availability check included, it only reads) and answers order id 0.
   */
  async order(
    accountId: number,
    input: DomainOrderInput,
    opts: DryRun & { charge?: boolean } = {},
  ): Promise<{ orderId: number }> {
    const name = this.deps.domains.names.registrable(input.domain)
    if (!name) throw errors.invalidDomainName()
    const tld = await this.deps.extensions.forDomain(name)
    if (!tld) throw errors.unknownExtension(name.slice(name.indexOf('.') + 1))
    const type = input.type ?? 'register'
    const period = input.period ?? 1
    if (period < tld.min_period || period > tld.max_period) {
      throw errors.invalidPeriod(tld.extension, tld.min_period, tld.max_period)
    }
    // References are checked now so a typo is a 400, and again when the order is processed.
    if (input.nameserver) await this.deps.nameservers.get(accountId, input.nameserver)
    if (input.dns_template_id) await this.deps.dnsTemplates.get(accountId, input.dns_template_id)
    await this.deps.contacts.resolve(accountId, input.profile ?? {})

    const check = await this.check(name)
    let priceCents: number
    if (type === 'register') {
      if (check.status !== 'available') throw errors.domainNotAvailable()
      if (check.premium) {
        const accepted = input.accept_premium_price
        if (typeof accepted !== 'number' || Math.round(accepted * 100) !== check.premium.registerCents) {
          throw errors.premiumPriceNotAccepted((check.premium.registerCents / 100).toFixed(2))
        }
        priceCents = check.premium.registerCents + tld.renew_cents * (period - 1)
      } else {
        priceCents = tld.register_cents + tld.renew_cents * (period - 1)
      }
    } else {
      if (check.status !== 'transfer') throw errors.domainNotTransferable()
      priceCents = tld.transfer_cents
    }
    // Only the account's own open order blocks a second one: another account's open or failed order holds
    // nothing (the name is taken when a domain is created), and answering it would tell who ordered what.
    if (await this.deps.orders.hasPendingItem(accountId, 'domain', name)) throw errors.domainAlreadyOrdered()
    if (opts.dryRun) return { orderId: 0 }

    const details: DomainItemDetails = {
      type,
      transfer_code: input.transfer_code ?? null,
      nameserver: input.nameserver ?? null,
      dns_template_id: input.dns_template_id ?? null,
      profile: input.profile ?? {},
      period,
    }
    return this.deps.orders.createOrder(
      accountId,
      [
        {
          type: 'domain',
          name,
          details,
          priceCents,
          description: `Domain ${name}: ${type === 'register' ? `registration, ${period} year${period > 1 ? 's' : ''}` : 'transfer'}`,
        },
      ],
      { charge: opts.charge },
    )
  }

  /** The order processor: registers or transfers the name and creates the domain with its zone. */
  async process(item: OrderItemForProcessing): Promise<{ errors: OrderItemError[]; result?: unknown }> {
    if ((item.details as RenewalDetails).type === 'renew') return this.renew(item)
    const d = item.details as DomainItemDetails
    const existing = await this.deps.domains.find(item.accountId, item.name)
    if (existing) return { errors: [], result: { domain: existing.name, domain_id: existing.id } }

    // Checked again now: the name may have become invalid (an order from before the registrable-name rule) or
    // overlapping (another account's domain created at, above or below it since the order was placed).
    if (this.deps.domains.names.registrable(item.name) !== item.name) {
      return { errors: [{ code: 'domain', description: errors.invalidDomainName().message }] }
    }
    if ((await this.deps.domains.overlapping(item.name)).length > 0) {
      return { errors: [{ code: 'unavailable', description: 'The domain is not available for registration' }] }
    }

    const fail = (code: string, err: unknown) => {
      if (err instanceof ApiError) return { errors: [{ code, description: err.message }] }
      throw err
    }
    let ns: Awaited<ReturnType<NameserversService['resolve']>>
    let contacts: Partial<Record<Role, number>>
    let records: Awaited<ReturnType<DnsTemplatesService['recordsFor']>> = []
    try {
      ns = await this.deps.nameservers.resolve(item.accountId, d.nameserver)
    } catch (err) {
      return fail('nameserver', err)
    }
    try {
      contacts = await this.deps.contacts.resolve(item.accountId, d.profile)
    } catch (err) {
      return fail('profile', err)
    }
    if (d.dns_template_id) {
      try {
        records = await this.deps.dnsTemplates.recordsFor(item.accountId, d.dns_template_id, item.name)
      } catch (err) {
        return fail('dns_template', err)
      }
    }

    // The order item names the request: a run that died after the registry registered the name gets it again.
    const requestId = `order-item-${item.id}`
    const refused = await this.deps.faults?.('registry.register', item.accountId, { domain: item.name, type: d.type })
    const outcome: RegistryResult = refused
      ? { ok: false, code: 'refused', description: refused.status_description ?? REGISTRY_REFUSED }
      : d.type === 'transfer'
        ? await this.registry.transfer(item.name, d.transfer_code, requestId)
        : await this.registry.register(item.name, d.period, requestId)
    if (!outcome.ok) return { errors: [{ code: outcome.code, description: outcome.description }] }
    crashPoint('domains.order.registered')

    let domainId: number
    const zone: ZoneChange = { domain: item.name, kind: 'zone' }
    try {
      domainId = await this.db.transaction().execute(async (trx) => {
        const id = await this.deps.domains.create(trx, {
          accountId: item.accountId,
          name: item.name,
          renewalDate: outcome.expiresOn,
          nameserverProfile: ns.alias,
          nameservers: ns.nameservers,
          contacts,
        })
        const domain = present(
          await this.deps.domains.find(item.accountId, item.name, trx),
          `domain ${item.name} just created`,
        )
        await this.deps.dns.fill(trx, domain, records)
        await this.deps.zones.publish(trx, zone)
        await this.scheduleRenewal(trx, item.accountId, id, outcome.expiresOn)
        return id
      })
    } catch (err) {
      // Give the name back, so the job's next attempt registers it again instead of finding it taken.
      await this.registry.cancel(item.name)
      throw err
    }
    crashPoint('domains.order.committed')
    await this.deps.zones.committed(zone)
    this.jobs.poke()
    return { errors: [], result: { domain: item.name, domain_id: domainId } }
  }

  /** Renews a domain at the registry and moves its renewal date; a second run for the same date does nothing. */
  private async renew(item: OrderItemForProcessing): Promise<{ errors: OrderItemError[]; result?: unknown }> {
    const details = item.details as RenewalDetails
    const d = await this.deps.domains.find(item.accountId, item.name)
    if (!d) return { errors: [{ code: 'domain', description: 'The domain is no longer in the account' }] }
    if (d.renewal_date !== details.from) return { errors: [], result: { domain: d.name, renewal_date: d.renewal_date } }
    const { expiresOn } = await this.registry.renew(d.name, details.period)
    await this.db.transaction().execute(async (trx) => {
      await this.deps.domains.setRenewalDate(trx, item.accountId, d.id, expiresOn)
      await this.scheduleRenewal(trx, item.accountId, d.id, expiresOn)
    })
    this.jobs.poke()
    return { errors: [], result: { domain: d.name, renewal_date: expiresOn } }
  }

  /**
   * Merges a `PUT /orders/{id}` correction (`domain: {profile, nameserver, dns_template_id, transfer_code}`) into the
   * details. The references are checked against the account as `order` checks them: another account's contact,
   * nameserver profile or DNS template answers as a missing one (404 with the same text) and nothing is stored.
   */
  async applyFix(accountId: number, details: unknown, fix: unknown): Promise<unknown> {
    const d = { ...(details as DomainItemDetails) }
    const f = (fix as { domain?: Partial<DomainItemDetails> & { profile?: DomainItemDetails['profile'] } }).domain ?? {}
    if (f.nameserver) await this.deps.nameservers.get(accountId, f.nameserver)
    if (f.dns_template_id) await this.deps.dnsTemplates.get(accountId, f.dns_template_id)
    if (f.profile) await this.deps.contacts.resolve(accountId, f.profile)
    if (f.transfer_code !== undefined) d.transfer_code = f.transfer_code
    if (f.nameserver !== undefined) d.nameserver = f.nameserver || null
    if (f.dns_template_id !== undefined) d.dns_template_id = f.dns_template_id || null
    if (f.profile !== undefined) d.profile = { ...d.profile, ...f.profile }
    return d
  }
}
