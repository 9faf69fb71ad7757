import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { Type } from 'typebox'
import { iso, ymd, type Clock } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import type { MailDriver } from '../../drivers/mail/mail.js'
import { errors } from '../../errors.js'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import type { DryRun } from '../../lib/dry-run.js'
import { isIpLiteral, isPublicAddress } from '../../lib/public-address.js'
import type { SecretBox, SecretHolder } from '../../lib/secret-box.js'
import { newWebhookSecret, signatureHeader } from '../../lib/webhook-signature.js'
import { DELIVERY_JOB, emitOnce, recordEvent, TEST_EVENT, type EventBody } from './webhook-events.js'
import { SendError, sendWebhook, systemResolver, type Resolver, type SenderOptions } from './webhook-sender.js'
import * as repo from './webhooks.repository.js'
import type { WebhookDelivery, WebhookEndpoint } from './webhooks.tables.js'
import { pageOf, pagination } from '../../lib/paging.js'

/** A webhook endpoint as the API shows it (never with its secret). */
export interface WebhookView {
  id: number
  url: string
  description: string
  events: string[]
  enabled: boolean
  /** Why hostapi disabled the endpoint, when it did. */
  disabled_reason: string | null
  created_at: string
  updated_at: string
}

/** A delivery of an event to an endpoint as the API shows it. */
export interface DeliveryView {
  id: number
  event_id: string
  event_type: string
  status: 'pending' | 'sending' | 'succeeded' | 'failed'
  attempts: number
  response_status: number | null
  duration_ms: number | null
  last_error: string | null
  last_attempt_at: string | null
  next_attempt_at: string | null
  created_at: string
}

/** What `POST /account/webhooks` carries. */
export interface NewWebhookBody {
  url: string
  events: string[]
  description?: string
  enabled?: boolean
}

/** What `PUT /account/webhooks/{id}` carries. */
export type UpdateWebhookBody = Partial<NewWebhookBody>

/** How the webhooks area behaves; see the configuration. */
export interface WebhookOptions {
  maxEndpoints: number
  /** Attempts in flight to one endpoint at a time. */
  endpointConcurrency: number
  /** Attempts in flight to the endpoints of one account at a time: its share of the delivery jobs' lane. */
  accountConcurrency: number
  sender: SenderOptions
}

const SECRET_CONTEXT = 'webhook_endpoints.secret'
const PREVIOUS_CONTEXT = 'webhook_endpoints.previous_secret'
const PREVIOUS_SECRET_MS = 24 * 3600_000
// How long an attempt holds an endpoint slot: longer than any send, shorter than the job's lease.
const ATTEMPT_LEASE_MS = 30_000
// One job goes on with an endpoint's parked deliveries for at most this many attempts or this long.
const CHAIN_MAX = 50
const CHAIN_MS = 30_000
const DELIVERIES_SHOWN = 50
const DAY_MS = 86_400_000
const SCAN_EVERY_MS = 3600_000
// Finished deliveries (and events left without one) are kept this long, for the delivery lists and redelivery.
const KEEP_MS = 30 * DAY_MS
/** The job kind of the expiry scan. */
export const EXPIRING_JOB = 'webhooks.expiring'
// Days before renewal or expiry, each with the next (smaller) mark: the 30-day event covers 30 to 8 days.
const EXPIRY_MARKS: [number, number][] = [
  [30, 7],
  [7, 0],
]

/**
 * The wait after each failed attempt: 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 20 h, about three
 * days from the first attempt to the eleventh and last. Each wait is spread by ±10 % (jitter) so deliveries that
 * failed together do not come back together.
 */
const H = 3600e3
/** See above. */
export const RETRY_SCHEDULE_MS = [5e3, 60e3, 300e3, 1800e3, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 20 * H]
const JITTER = 0.1

const view = (e: WebhookEndpoint): WebhookView => ({
  id: e.id,
  url: e.url,
  description: e.description,
  events: JSON.parse(e.events) as string[],
  enabled: e.enabled === 1,
  disabled_reason: e.disabled_reason,
  created_at: e.created_at,
  updated_at: e.updated_at,
})

const deliveryView = (d: repo.DeliveryRow): DeliveryView => ({
  id: d.id,
  event_id: d.event_uid,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  response_status: d.response_status,
  duration_ms: d.duration_ms,
  last_error: d.last_error,
  last_attempt_at: d.last_attempt_at,
  next_attempt_at: d.status === 'pending' ? d.next_attempt_at : null,
  created_at: d.created_at,
})

/** A delivery as the admin API shows it: with its account and endpoint. */
export interface AdminDeliveryView extends DeliveryView {
  account_id: number
  webhook_id: number
}

const adminDeliveryView = (d: repo.DeliveryRow): AdminDeliveryView => ({
  ...deliveryView(d),
  account_id: d.account_id,
  webhook_id: d.endpoint_id,
})

/**
 * Webhook endpoints of accounts and the delivery of their events: signed as the Standard Webhooks specification
 * asks, at least once, retried with backoff for about three days, to public addresses only unless allowed.
 */
export class WebhooksService implements SecretHolder {
  private resolve: Resolver = systemResolver

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly box: SecretBox,
    private readonly mail: MailDriver,
    private readonly log: Logger,
    private readonly opts: WebhookOptions,
  ) {}

  /** The job that makes one attempt of one delivery. */
  readonly deliverJob = defineJob({
    name: DELIVERY_JOB,
    payload: Type.Object({ deliveryId: Type.Integer() }),
    handle: async ({ deliveryId }) => this.attempt(deliveryId),
  })

  /**
   * The hourly scan for domains and certificates 30 and 7 days from renewal or expiry, and the prune of deliveries
   * finished 30 days ago; each run queues the next.
   */
  readonly expiringJob = defineJob({
    name: EXPIRING_JOB,
    payload: Type.Null(),
    handle: async () => {
      const pruned = await repo.pruneDelivered(this.db, iso(new Date(this.clock.now().getTime() - KEEP_MS)))
      const restarted = await this.restartParked(this.clock.now())
      const events = await this.scanExpiring()
      await this.jobs.enqueue(this.expiringJob, null, { runAt: new Date(this.clock.now().getTime() + SCAN_EVERY_MS) })
      return { events, pruned, restarted }
    },
  })

  /** Queues the expiry scan unless one is queued already. */
  async scheduleScan(): Promise<void> {
    if (!(await repo.jobPending(this.db, EXPIRING_JOB))) await this.jobs.enqueue(this.expiringJob, null)
  }

  /**
   * Records `domain.expiring` and `certificate.expiring` for what is 30 days (and then 7 days) or less from its
   * renewal or expiry, once per mark and period: the event id names them, so a scan that runs again records
   * nothing new. Only the nearest mark is sent (an endpoint added 5 days before gets the 7-day event alone).
   */
  async scanExpiring(): Promise<number> {
    const now = this.clock.now()
    const day = (n: number) => new Date(now.getTime() + n * DAY_MS)
    let n = 0
    for (const [mark, next] of EXPIRY_MARKS) {
      for (const d of await repo.domainsRenewedBetween(this.db, ymd(day(next)), ymd(day(mark)))) {
        const data = { domain: d.name, status: d.status, renewal_date: d.renewal_date, days: mark }
        const uid = `msg_domain_expiring_${d.id}_${d.renewal_date}_${mark}`
        await this.db.transaction().execute((trx) => emitOnce(trx, d.account_id, 'domain.expiring', data, now, uid))
        n++
      }
      for (const c of await repo.certificatesExpiringBetween(this.db, iso(day(next)), iso(day(mark)))) {
        const until = c.valid_until!
        const data = { id: c.id, common_name: c.common_name, certificate_status: c.status, valid_until: until }
        const uid = `msg_certificate_expiring_${c.id}_${until.slice(0, 10)}_${mark}`
        const type = 'certificate.expiring' as const
        await this.db
          .transaction()
          .execute((trx) => emitOnce(trx, c.account_id, type, { ...data, days: mark }, now, uid))
        n++
      }
    }
    return n
  }

  /** Replaces the resolver used at delivery (tests play DNS answers with it). */
  setResolver(resolve: Resolver): void {
    this.resolve = resolve
  }

  /** The endpoints of an account. */
  async list(accountId: number): Promise<WebhookView[]> {
    return (await repo.listEndpoints(this.db, accountId)).map(view)
  }

  /** One endpoint of an account; 404 when the account has none of this id. */
  async get(accountId: number, id: number): Promise<WebhookView> {
    return view(await this.owned(accountId, id))
  }

  /** Adds an endpoint; its secret is in the answer, and only there. */
  async create(accountId: number, input: NewWebhookBody, opts: DryRun = {}): Promise<WebhookView & { secret: string }> {
    const url = this.checkUrl(input.url)
    if ((await repo.countEndpoints(this.db, accountId)) >= this.opts.maxEndpoints)
      throw errors.tooManyWebhooks(this.opts.maxEndpoints)
    const now = iso(this.clock.now())
    const secret = newWebhookSecret()
    const row = {
      account_id: accountId,
      url,
      description: input.description ?? '',
      events: JSON.stringify(input.events),
      enabled: input.enabled === false ? 0 : 1,
      secret: this.box.seal(secret, SECRET_CONTEXT),
      created_at: now,
      updated_at: now,
    }
    if (opts.dryRun) {
      const endpoint = { ...row, id: 0, disabled_reason: null, previous_secret: null, previous_secret_until: null }
      return { ...view({ ...endpoint, last_success_at: null }), secret }
    }
    const { id } = await repo.insertEndpoint(this.db, row)
    return { ...(await this.get(accountId, id)), secret }
  }

  /** Changes the fields given; enabling an endpoint hostapi disabled clears the reason. */
  async update(accountId: number, id: number, input: UpdateWebhookBody, opts: DryRun = {}): Promise<WebhookView> {
    const endpoint = await this.owned(accountId, id)
    const changes: Partial<WebhookEndpoint> = { updated_at: iso(this.clock.now()) }
    if (input.url !== undefined) changes.url = this.checkUrl(input.url)
    if (input.events !== undefined) changes.events = JSON.stringify(input.events)
    if (input.description !== undefined) changes.description = input.description
    if (input.enabled !== undefined) {
      changes.enabled = input.enabled ? 1 : 0
      changes.disabled_reason = null
    }
    if (opts.dryRun) return view({ ...endpoint, ...changes })
    await repo.updateEndpoint(this.db, accountId, id, changes)
    return this.get(accountId, id)
  }

  /** Removes an endpoint and its deliveries. */
  async remove(accountId: number, id: number, opts: DryRun = {}): Promise<void> {
    await this.owned(accountId, id)
    if (!opts.dryRun) await repo.deleteEndpoint(this.db, accountId, id)
  }

  /** A new secret, returned once; the old one keeps signing beside it for 24 hours. */
  async rotateSecret(accountId: number, id: number, opts: DryRun = {}): Promise<{ secret: string }> {
    const endpoint = await this.owned(accountId, id)
    const secret = newWebhookSecret()
    if (opts.dryRun) return { secret }
    const now = this.clock.now()
    await repo.updateEndpoint(this.db, accountId, id, {
      secret: this.box.seal(secret, SECRET_CONTEXT),
      previous_secret: this.box.seal(this.box.open(endpoint.secret, SECRET_CONTEXT), PREVIOUS_CONTEXT),
      previous_secret_until: iso(new Date(now.getTime() + PREVIOUS_SECRET_MS)),
      updated_at: iso(now),
    })
    return { secret }
  }

  /** Queues a `webhook.test` event to this endpoint alone (even when it is disabled). */
  async sendTest(accountId: number, id: number, opts: DryRun = {}): Promise<DeliveryView> {
    const endpoint = await this.owned(accountId, id)
    const now = this.clock.now()
    const body: EventBody = {
      type: TEST_EVENT,
      timestamp: iso(now),
      data: { webhook_id: endpoint.id, account: await repo.customerNumber(this.db, accountId) },
    }
    if (opts.dryRun) return this.dryDelivery(TEST_EVENT, now)
    const [deliveryId] = await this.db
      .transaction()
      .execute((trx) => recordEvent(trx, accountId, body, [endpoint], now))
    return this.delivery(accountId, id, deliveryId)
  }

  /** The most recent deliveries of an endpoint, newest first. */
  async deliveries(accountId: number, id: number): Promise<DeliveryView[]> {
    await this.owned(accountId, id)
    return (await repo.listDeliveries(this.db, accountId, id, DELIVERIES_SHOWN)).map(deliveryView)
  }

  /** Sends a delivery's event again as a new delivery, with a fresh set of attempts. */
  async redeliver(accountId: number, id: number, deliveryId: number, opts: DryRun = {}): Promise<DeliveryView> {
    await this.owned(accountId, id)
    const old = await repo.findDelivery(this.db, accountId, id, deliveryId)
    if (!old) throw errors.webhookDeliveryNotFound()
    const now = this.clock.now()
    if (opts.dryRun) return this.dryDelivery(old.event_type, now, old.event_uid)
    const newId = await this.db
      .transaction()
      .execute((trx) => repo.insertDelivery(trx, accountId, id, old.event_id, now))
    return this.delivery(accountId, id, newId)
  }

  /** The operator's list of deliveries of every account, newest first. */
  async adminDeliveries(query: {
    page?: number
    limit?: number
    status?: WebhookDelivery['status']
    account?: number
  }) {
    const page = pageOf(query)
    const filter: repo.DeliveryFilter = { status: query.status }
    if (query.account !== undefined) filter.accountId = (await repo.accountIdOf(this.db, query.account)) ?? -1
    const total = await repo.adminCountDeliveries(this.db, filter)
    const pag = pagination(page, total)
    const rows = await repo.adminListDeliveries(this.db, filter, page.limit, page.offset)
    return { deliveries: rows.map(adminDeliveryView), pagination: pag }
  }

  /** The operator's redelivery of any account's delivery, as a new delivery of the same event. */
  async adminRedeliver(deliveryId: number): Promise<AdminDeliveryView> {
    const old = await repo.adminFindDelivery(this.db, deliveryId)
    if (!old) throw errors.webhookDeliveryNotFound()
    const now = this.clock.now()
    const id = await this.db
      .transaction()
      .execute((trx) => repo.insertDelivery(trx, old.account_id, old.endpoint_id, old.event_id, now))
    return adminDeliveryView((await repo.adminFindDelivery(this.db, id))!)
  }

  /**
   * The sandbox's flush: runs every delivery attempt that is due by the (sandbox) clock now, in this call, and with
   * `all` every pending one, as if its wait were over. Returns how many attempts ran.
   */
  async flush(all: boolean): Promise<number> {
    if (all) await repo.makeAttemptsDue(this.db, this.clock.now())
    return this.jobs.drain([DELIVERY_JOB])
  }

  /** What the metrics show: pending deliveries, failing and disabled endpoints, the oldest pending age. */
  async stats(): Promise<{ pending: number; failing: number; disabled: number; oldestPendingSeconds: number }> {
    const s = await repo.deliveryStats(this.db)
    const age = s.oldestPending ? (this.clock.now().getTime() - Date.parse(s.oldestPending)) / 1000 : 0
    return { pending: s.pending, failing: s.failing, disabled: s.disabled, oldestPendingSeconds: Math.max(0, age) }
  }

  /** Checks every stored secret opens; seals plaintext ones and, with `rotate`, re-seals old-key ones. */
  async resealSecrets(rotate: boolean): Promise<number> {
    let n = 0
    for (const row of await repo.allSecrets(this.db)) {
      const secret = this.box.open(row.secret, SECRET_CONTEXT)
      const previous = row.previous_secret && this.box.open(row.previous_secret, PREVIOUS_CONTEXT)
      const stale = !this.box.isCurrent(row.secret) || (row.previous_secret && !this.box.isCurrent(row.previous_secret))
      if (!rotate || !stale) continue
      await repo.updateEndpoint(this.db, row.account_id, row.id, {
        secret: this.box.seal(secret, SECRET_CONTEXT),
        previous_secret: previous ? this.box.seal(previous, PREVIOUS_CONTEXT) : null,
      })
      n++
    }
    return n
  }

  private dryDelivery(eventType: string, now: Date, eventId = 'msg_dry_run'): DeliveryView {
    return {
      id: 0,
      event_id: eventId,
      event_type: eventType,
      status: 'pending',
      attempts: 0,
      response_status: null,
      duration_ms: null,
      last_error: null,
      last_attempt_at: null,
      next_attempt_at: iso(now),
      created_at: iso(now),
    }
  }

  private async delivery(accountId: number, id: number, deliveryId: number): Promise<DeliveryView> {
    const row = await repo.findDelivery(this.db, accountId, id, deliveryId)
    if (!row) throw errors.webhookDeliveryNotFound()
    return deliveryView(row)
  }

  private async owned(accountId: number, id: number): Promise<WebhookEndpoint> {
    const endpoint = await repo.findEndpoint(this.db, accountId, id)
    if (!endpoint) throw errors.webhookNotFound()
    return endpoint
  }

  /** The URL as stored; a 400 for one that could never be delivered to under the configuration. */
  private checkUrl(text: string): string {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      throw errors.invalidWebhookUrl('not an absolute URL')
    }
    const { allowHttp, allowPrivate } = this.opts.sender
    if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:'))
      throw errors.invalidWebhookUrl(allowHttp ? 'use https:// or http://' : 'use https://')
    if (url.username || url.password) throw errors.invalidWebhookUrl('credentials in the URL are not allowed')
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
    const local = host === 'localhost' || host.endsWith('.localhost') || (isIpLiteral(host) && !isPublicAddress(host))
    if (local && !allowPrivate) throw errors.invalidWebhookUrl('the host is not a public address')
    url.hash = ''
    return url.toString()
  }

  /**
   * The job's work: an attempt of the delivery, then, while the account has parked deliveries, attempts of those in
   * turn (a bounded chain; what is left is queued as a job of its own).
   */
  private async attempt(deliveryId: number): Promise<unknown> {
    const started = Date.now()
    let outcome = await this.attemptOne({ deliveryId })
    let n = 1
    while (outcome.next !== null) {
      if (n >= CHAIN_MAX || Date.now() - started > CHAIN_MS) {
        const { next } = outcome
        await repo.queueAttempt(this.db, next.accountId, next.deliveryId, this.clock.now(), this.clock.now())
        break
      }
      outcome = await this.attemptOne({ accountId: outcome.next.accountId })
      n++
    }
    return { attempts: n, last: outcome.result }
  }

  /**
   * One attempt: claims the delivery (`deliveryId`, or the account's longest parked one), sends it and records the
   * answer. When the endpoint, or the account, has its concurrent attempts in flight the delivery is parked instead:
   * no job waits for it, an attempt of the account that frees a slot takes it next. `next` names the account's
   * parked delivery that is due.
   */
  private async attemptOne(
    which: { deliveryId: number } | { accountId: number },
  ): Promise<{ result: unknown; next: { deliveryId: number; accountId: number } | null }> {
    const now = this.clock.now()
    const claim = await this.db.transaction().execute(async (trx) => {
      if ('accountId' in which) await repo.lockAccount(trx, which.accountId)
      const limit = this.opts.endpointConcurrency
      const id =
        'deliveryId' in which ? which.deliveryId : (await repo.oldestParked(trx, which.accountId, iso(now), limit))?.id
      const delivery = id === undefined ? undefined : await repo.deliveryById(trx, id)
      if (!delivery) return { skip: 'gone' as const }
      // A pending delivery is due at its next attempt: a job run again after a crash must not send it early.
      const due = delivery.status === 'pending' && (delivery.next_attempt_at ?? '') <= iso(now)
      const claimable = due || (delivery.status === 'sending' && (delivery.locked_until ?? '') < iso(now))
      if (!claimable) return { skip: delivery.status }
      const endpoint = await repo.endpointById(trx, delivery.endpoint_id)
      if (!endpoint) return { skip: 'gone' as const }
      const event = await repo.eventById(trx, delivery.event_id)
      // A disabled endpoint gets test events only: disabling it stops its pending deliveries.
      if (endpoint.enabled !== 1 && event.type !== TEST_EVENT) {
        await repo.updateDelivery(trx, delivery.id, {
          status: 'failed',
          parked: 0,
          next_attempt_at: null,
          last_error: 'The endpoint is disabled',
          updated_at: iso(now),
        })
        return { skip: 'disabled' as const, accountId: endpoint.account_id }
      }
      await repo.lockAccount(trx, endpoint.account_id)
      const busy =
        (await repo.inFlight(trx, { endpoint: endpoint.id }, iso(now))) >= this.opts.endpointConcurrency ||
        (await repo.inFlight(trx, { account: endpoint.account_id }, iso(now))) >= this.opts.accountConcurrency
      if (busy) {
        if (delivery.parked !== 1) await repo.updateDelivery(trx, delivery.id, { parked: 1, updated_at: iso(now) })
        return { skip: 'busy' as const }
      }
      const attempts = delivery.attempts + 1
      await repo.updateDelivery(trx, delivery.id, {
        status: 'sending',
        parked: 0,
        attempts,
        locked_until: iso(new Date(now.getTime() + ATTEMPT_LEASE_MS)),
        last_attempt_at: iso(now),
        updated_at: iso(now),
      })
      return { delivery: { ...delivery, attempts }, endpoint, event }
    })
    if ('skip' in claim) {
      // A delivery failed for a disabled endpoint frees no slot, but its parked ones must fail too.
      const accountId = 'accountId' in claim ? claim.accountId : undefined
      const next = accountId === undefined ? null : await this.nextParked(accountId)
      return { result: { skipped: claim.skip }, next }
    }
    const { delivery, endpoint, event } = claim
    const secrets = [this.box.open(endpoint.secret, SECRET_CONTEXT)]
    if (endpoint.previous_secret && (endpoint.previous_secret_until ?? '') > iso(now))
      secrets.push(this.box.open(endpoint.previous_secret, PREVIOUS_CONTEXT))
    const timestamp = Math.floor(now.getTime() / 1000)
    const headers = {
      'webhook-id': event.uid,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, event.uid, timestamp, event.payload),
      'user-agent': 'hostapi-webhooks',
    }
    let status: number | null = null
    let durationMs: number
    let error: string | null = null
    try {
      const result = await sendWebhook(endpoint.url, headers, event.payload, this.opts.sender, this.resolve)
      status = result.status
      durationMs = result.durationMs
      if (status < 200 || status > 299) error = `The receiver answered ${status}`
    } catch (err) {
      if (!(err instanceof SendError)) throw err
      durationMs = err.durationMs
      error = err.message
    }
    await this.record(delivery, endpoint, { status, durationMs, error })
    return { result: { status, error }, next: await this.nextParked(endpoint.account_id) }
  }

  /** The account's parked delivery that is due and whose endpoint has a free slot, for the chain to take next. */
  private async nextParked(accountId: number) {
    const now = iso(this.clock.now())
    const row = await repo.oldestParked(this.db, accountId, now, this.opts.endpointConcurrency)
    return row ? { deliveryId: row.id, accountId } : null
  }

  /** Queues a job for the longest parked delivery of accounts whose chains stopped (a crash): the safety net. */
  private async restartParked(now: Date): Promise<number> {
    const stale = await repo.accountsParkedSince(this.db, iso(new Date(now.getTime() - ATTEMPT_LEASE_MS * 2)))
    let n = 0
    for (const e of stale) {
      if ((await repo.inFlight(this.db, { account: e.account_id }, iso(now))) > 0) continue
      const next = await this.nextParked(e.account_id)
      if (next) await repo.queueAttempt(this.db, next.accountId, next.deliveryId, now, now)
      n++
    }
    return n
  }

  private async record(
    delivery: { id: number; account_id: number; attempts: number; created_at: string },
    endpoint: WebhookEndpoint,
    outcome: { status: number | null; durationMs: number; error: string | null },
  ): Promise<void> {
    const now = this.clock.now()
    const base = {
      response_status: outcome.status,
      duration_ms: outcome.durationMs,
      last_error: outcome.error,
      locked_until: null,
      updated_at: iso(now),
    }
    if (outcome.error === null) {
      await this.db.transaction().execute(async (trx) => {
        await repo.updateDelivery(trx, delivery.id, { ...base, status: 'succeeded', next_attempt_at: null })
        await repo.updateEndpoint(trx, endpoint.account_id, endpoint.id, { last_success_at: iso(now) })
      })
      return
    }
    const wait = RETRY_SCHEDULE_MS[delivery.attempts - 1]
    if (wait !== undefined) {
      const next = new Date(now.getTime() + Math.round(wait * (1 + JITTER * (2 * Math.random() - 1))))
      await this.db.transaction().execute(async (trx) => {
        await repo.updateDelivery(trx, delivery.id, { ...base, status: 'pending', next_attempt_at: iso(next) })
        await repo.queueAttempt(trx, delivery.account_id, delivery.id, next, now)
      })
      return
    }
    await repo.updateDelivery(this.db, delivery.id, { ...base, status: 'failed', next_attempt_at: null })
    // An endpoint with a success after this delivery began is working again: only this delivery failed.
    if (endpoint.enabled !== 1 || (endpoint.last_success_at ?? '') > delivery.created_at) return
    await this.disable(endpoint, now)
  }

  private async disable(endpoint: WebhookEndpoint, now: Date): Promise<void> {
    const reason = `Every delivery failed since ${endpoint.last_success_at ?? endpoint.created_at}`
    await repo.updateEndpoint(this.db, endpoint.account_id, endpoint.id, {
      enabled: 0,
      disabled_reason: reason,
      updated_at: iso(now),
    })
    this.log.warn({ accountId: endpoint.account_id, webhookId: endpoint.id }, 'webhook endpoint disabled')
    const to = await repo.mainUserEmail(this.db, endpoint.account_id)
    if (!to) return
    await this.mail.send({
      to,
      subject: `Webhook endpoint ${endpoint.id} was disabled`,
      text:
        `Deliveries to your webhook endpoint ${endpoint.url} kept failing for about three days, so we disabled it.\n` +
        `${reason}.\nFix the receiver, then enable the endpoint again (PUT /account/webhooks/${endpoint.id}` +
        ' with {"enabled": true}) and redeliver the failed deliveries.',
      kind: 'webhook.disabled',
      accountId: endpoint.account_id,
    })
  }
}
