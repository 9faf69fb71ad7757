import type { Kysely } from 'kysely'
import { present } from '../../lib/invariant.js'
import type { Logger } from 'pino'
import { iso, type Clock } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import type { Mailer } from '../mail/mail.service.js'
import { errors } from '../../errors.js'
import type { JobRunner } from '../../jobs/runner.js'
import type { DryRun } from '../../lib/dry-run.js'
import type { SecretBox } from '../../lib/secret-box.js'
import { newWebhookSecret, signatureHeader } from '../../lib/webhook-signature.js'
import { parseWebhookUrl } from '../../lib/webhook-url.js'
import type { Principal } from '../iam/iam.service.js'
import { DELIVERY_JOB, EVENT_AREAS, mayRead, recordEvent, TEST_EVENT, type EventBody } from './webhook-events.js'
import { PREVIOUS_CONTEXT, SECRET_CONTEXT, WebhookDeliverer, type DeliveryOptions } from './webhook-deliverer.js'
import { WebhookScans } from './webhook-scans.js'
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

/** The user who creates or changes an endpoint: its owner from then on. */
export type WebhookOwner = Pick<Principal, 'accountId' | 'userId' | 'isMainUser' | 'permissions'>

/**
 * The stored event list of an endpoint of `who`: 400 naming the first event `who` may not read (`*` stands for the
 * events `who` may read, at each event).
 */
function eventsOf(who: WebhookOwner, events: string[]): string {
  for (const e of events) {
    if (e !== '*' && !mayRead(who, e))
      throw errors.webhookEventNotPermitted(e, EVENT_AREAS[e as keyof typeof EVENT_AREAS])
  }
  return JSON.stringify(events)
}

/** How the webhooks area behaves; see the configuration. */
export interface WebhookOptions extends DeliveryOptions {
  maxEndpoints: number
}

const PREVIOUS_SECRET_MS = 24 * 3600_000
const DELIVERIES_SHOWN = 50

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
  // How long an attempt that reached no receiver took tells a refused port from a silent one: not shown.
  duration_ms: d.response_status === null ? null : d.duration_ms,
  last_error: d.last_error,
  last_attempt_at: d.last_attempt_at,
  next_attempt_at: d.status === 'pending' ? d.next_attempt_at : null,
  created_at: d.created_at,
})

/** A delivery as the admin API shows it: with its account and endpoint, and the last failure in detail. */
export interface AdminDeliveryView extends DeliveryView {
  account_id: number
  webhook_id: number
  error_detail: string | null
}

const adminDeliveryView = (d: repo.DeliveryRow): AdminDeliveryView => ({
  ...deliveryView(d),
  duration_ms: d.duration_ms,
  account_id: d.account_id,
  webhook_id: d.endpoint_id,
  error_detail: d.error_detail,
})

/** What WebhooksService is built on. */
export interface WebhooksServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  box: SecretBox
  mail: Mailer
  log: Logger
  opts: WebhookOptions
}

/**
 * Webhook endpoints of accounts, their deliveries as the customer and the operator see them, and one service per
 * other concern: the delivery of events (`deliverer`) and the hourly scans (`scans`).
 */
export class WebhooksService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly box: SecretBox
  private readonly opts: WebhookOptions

  constructor(deps: WebhooksServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.box = deps.box
    this.opts = deps.opts
    const { db, clock, jobs, box, mail, log, opts } = deps
    this.deliverer = new WebhookDeliverer({ db, clock, box, mail, log, opts })
    this.scans = new WebhookScans({ db, clock, jobs, deliverer: this.deliverer })
  }

  /** Attempts of deliveries: the delivery job, signing, sending, retries and disabling failing endpoints. */
  readonly deliverer: WebhookDeliverer
  /** The hourly scan for expiring domains and certificates, the prune and the restart of parked deliveries. */
  readonly scans: WebhookScans

  /** The endpoints of an account. */
  async list(accountId: number): Promise<WebhookView[]> {
    return (await repo.listEndpoints(this.db, accountId)).map(view)
  }

  /** One endpoint of an account; 404 when the account has none of this id. */
  async get(accountId: number, id: number): Promise<WebhookView> {
    return view(await this.owned(accountId, id))
  }

  /**
   * Adds an endpoint owned by `who`, which receives the events `who` may read; its secret is in the answer, and only
   * there.
   */
  async create(who: WebhookOwner, input: NewWebhookBody, opts: DryRun = {}): Promise<WebhookView & { secret: string }> {
    const { accountId } = who
    const url = parseWebhookUrl(input.url, this.opts.sender)
    const events = eventsOf(who, input.events)
    if ((await repo.countEndpoints(this.db, accountId)) >= this.opts.maxEndpoints)
      throw errors.tooManyWebhooks(this.opts.maxEndpoints)
    const now = iso(this.clock.now())
    const secret = newWebhookSecret()
    const row = {
      account_id: accountId,
      user_id: who.userId,
      url,
      description: input.description ?? '',
      events,
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

  /**
   * Changes the fields given; enabling an endpoint hostapi disabled clears the reason. Setting `url` or `events`
   * makes `who` the owner (so where events go and which are sent follow `who`'s permissions, never another user's):
   * the events listed must be ones `who` may read, those kept when only `url` changes too.
   */
  async update(who: WebhookOwner, id: number, input: UpdateWebhookBody, opts: DryRun = {}): Promise<WebhookView> {
    const { accountId } = who
    const endpoint = await this.owned(accountId, id)
    const changes: Partial<WebhookEndpoint> = { updated_at: iso(this.clock.now()) }
    if (input.url !== undefined) changes.url = parseWebhookUrl(input.url, this.opts.sender)
    if (input.url !== undefined || input.events !== undefined) {
      changes.events = eventsOf(who, input.events ?? (JSON.parse(endpoint.events) as string[]))
      changes.user_id = who.userId
    }
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

  /**
   * One delivery of any account as it went out: the endpoint's URL, the body, and the headers of its last attempt
   * (signed with the secrets the endpoint signed with then: the current one, and the previous one while it still
   * signed), besides what the receiver answered.
   */
  async adminDelivery(deliveryId: number) {
    const d = await repo.adminFindDelivery(this.db, deliveryId)
    if (!d) throw errors.webhookDeliveryNotFound()
    const endpoint = present(await repo.findEndpoint(this.db, d.account_id, d.endpoint_id), `endpoint ${d.endpoint_id}`)
    const body = present(await repo.eventPayload(this.db, d.event_id), `event ${d.event_id}`)
    let headers: Record<string, string> | null = null
    if (d.last_attempt_at) {
      const secrets = [this.box.open(endpoint.secret, SECRET_CONTEXT)]
      if (endpoint.previous_secret && (endpoint.previous_secret_until ?? '') > d.last_attempt_at)
        secrets.push(this.box.open(endpoint.previous_secret, PREVIOUS_CONTEXT))
      const timestamp = Math.floor(Date.parse(d.last_attempt_at) / 1000)
      headers = {
        'webhook-id': d.event_uid,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, d.event_uid, timestamp, body),
      }
    }
    return {
      ...adminDeliveryView(d),
      url: endpoint.url,
      payload: JSON.parse(body) as unknown,
      request_headers: headers,
    }
  }

  /** The operator's redelivery of any account's delivery, as a new delivery of the same event. */
  async adminRedeliver(deliveryId: number): Promise<AdminDeliveryView> {
    const old = await repo.adminFindDelivery(this.db, deliveryId)
    if (!old) throw errors.webhookDeliveryNotFound()
    const now = this.clock.now()
    const id = await this.db
      .transaction()
      .execute((trx) => repo.insertDelivery(trx, old.account_id, old.endpoint_id, old.event_id, now))
    return adminDeliveryView(present(await repo.adminFindDelivery(this.db, id), `webhook delivery ${id}`))
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
}
