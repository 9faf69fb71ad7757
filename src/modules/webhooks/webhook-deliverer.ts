import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { iso, type Clock } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import type { Mailer } from '../mail/mail.service.js'
import { defineJob } from '../../jobs/runner.js'
import type { SealedColumn, SecretBox } from '../../lib/secret-box.js'
import { signatureHeader } from '../../lib/webhook-signature.js'
import { mayRead, TEST_EVENT } from './webhook-events.js'
import { DELIVERY_KIND } from './webhook-delivery-job.js'
import { SendError, sendWebhook, systemResolver, type Resolver, type SenderOptions } from './webhook-sender.js'
import * as repo from './webhooks.repository.js'
import type { WebhookEndpoint } from './webhooks.tables.js'
import type { WorkFaults } from '../../ops/faults.js'
import { bareHost } from '../../lib/public-address.js'
import { setTimeout as sleep } from 'node:timers/promises'

/** How deliveries are made; see the configuration. */
export interface DeliveryOptions {
  /** Attempts in flight to one endpoint at a time. */
  endpointConcurrency: number
  /** Attempts in flight to the endpoints of one account at a time: its share of the delivery jobs' lane. */
  accountConcurrency: number
  sender: SenderOptions
  /** Sandbox fault injection into attempts (`webhook.delivery`); none in production. */
  faults?: WorkFaults | null
}

/** The context an endpoint's secret is sealed under. */
export const SECRET_CONTEXT = 'webhook_endpoints.secret'
/** The context an endpoint's previous secret (after a rotation) is sealed under. */
export const PREVIOUS_CONTEXT = 'webhook_endpoints.previous_secret'
/** The endpoints' sealed signing secrets. */
export const WEBHOOK_SEALED_COLUMNS: SealedColumn[] = [
  { table: 'webhook_endpoints', column: 'secret', reads: [], context: () => SECRET_CONTEXT },
  { table: 'webhook_endpoints', column: 'previous_secret', reads: [], context: () => PREVIOUS_CONTEXT },
]
// How long an attempt holds an endpoint slot: longer than any send, shorter than the job's lease.
const ATTEMPT_LEASE_MS = 30_000
// One job goes on with an account's parked deliveries for at most this many attempts or this long.
const CHAIN_MAX = 50
const CHAIN_MS = 30_000
// Why a delivery whose job was quarantined failed.
const DIED = 'the process sending it died during two attempts'

/**
 * The wait after each failed attempt: 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 20 h, about three
 * days from the first attempt to the eleventh and last. Each wait is spread by ±10 % (jitter) so deliveries that
 * failed together do not come back together.
 */
const H = 3600e3
/** See above. */
export const RETRY_SCHEDULE_MS = [5e3, 60e3, 300e3, 1800e3, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 20 * H]
const JITTER = 0.1

/** What WebhookDeliverer is built on. */
export interface WebhookDelivererDeps {
  db: Kysely<DB>
  clock: Clock
  box: SecretBox
  mail: Mailer
  log: Logger
  opts: DeliveryOptions
}

/**
 * The delivery of events to endpoints: signed as the Standard Webhooks specification asks, at least once, retried
 * with backoff for about three days, to public addresses only unless allowed, within the endpoint's and the
 * account's share of attempts in flight; an endpoint whose deliveries keep failing is disabled.
 */
export class WebhookDeliverer {
  private resolve: Resolver = systemResolver
  private dial: SenderOptions['dial']

  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly box: SecretBox
  private readonly mail: Mailer
  private readonly log: Logger
  private readonly opts: DeliveryOptions

  constructor(deps: WebhookDelivererDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.box = deps.box
    this.mail = deps.mail
    this.log = deps.log
    this.opts = deps.opts
  }

  /** The job that makes one attempt of one delivery. */
  readonly deliverJob = defineJob({
    ...DELIVERY_KIND,
    handle: async ({ deliveryId }) => this.attempt(deliveryId),
    // The delivery is not sent again (each attempt ended the process): it fails, and its endpoint's slot is freed.
    quarantined: async ({ deliveryId }) => {
      const now = iso(this.clock.now())
      await repo.failUnfinished(this.db, deliveryId, `Not sent again: ${DIED}`, now)
    },
  })

  /** Replaces the resolver used at delivery (tests play DNS answers with it). */
  setResolver(resolve: Resolver): void {
    this.resolve = resolve
  }

  /** Routes the checked addresses elsewhere (tests: to a receiver on loopback; see SenderOptions.dial). */
  setDial(dial: SenderOptions['dial']): void {
    this.dial = dial
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
      if (!claimable) {
        // Run again after a crash while its attempt still holds the slot: tried once the attempt's lease is over.
        if (delivery.status === 'sending' && 'deliveryId' in which)
          await repo.queueAttempt(trx, delivery.account_id, delivery.id, new Date(delivery.locked_until ?? now), now)
        // The run that sent it may have died before it went on with the account's parked deliveries: this one does.
        return { skip: delivery.status, accountId: delivery.account_id }
      }
      const found = await repo.endpointById(trx, delivery.endpoint_id)
      if (!found) return { skip: 'gone' as const }
      const { endpoint, owner } = found
      const event = await repo.eventById(trx, delivery.event_id)
      // A disabled endpoint gets test events only: disabling it stops its pending deliveries. An event its owner
      // may no longer read (a permission removed, the owner deleted or changed since it was queued) is not sent.
      const refused =
        event.type === TEST_EVENT
          ? null
          : endpoint.enabled !== 1
            ? 'The endpoint is disabled'
            : !mayRead(owner, event.type, event.reader_id)
              ? "The endpoint's owner may not read this event"
              : null
      if (refused !== null) {
        await repo.updateDelivery(trx, delivery.id, {
          status: 'failed',
          parked: 0,
          next_attempt_at: null,
          last_error: refused,
          updated_at: iso(now),
        })
        return { skip: 'refused' as const, accountId: endpoint.account_id }
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
      // A delivery failed unsent frees no slot, but the account's parked ones must be looked at too.
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
    let detail: string | null = null
    try {
      const sender = this.dial ? { ...this.opts.sender, dial: this.dial } : this.opts.sender
      await this.injectedTimeout(endpoint, event.type)
      const result = await sendWebhook(endpoint.url, headers, event.payload, sender, this.resolve)
      status = result.status
      durationMs = result.durationMs
      if (status < 200 || status > 299) error = detail = `The receiver answered ${status}`
    } catch (err) {
      // Whatever went wrong, the attempt is recorded and retried: a delivery is never left `sending`.
      const sendError = err instanceof SendError ? err : null
      durationMs = sendError?.durationMs ?? 0
      error = sendError?.summary ?? 'Sending failed'
      detail = sendError ? sendError.message : `Sending failed: ${(err as Error).message}`
      const ids = { accountId: endpoint.account_id, webhookId: endpoint.id, deliveryId: delivery.id }
      this.log.info({ ...ids, detail }, 'webhook attempt reached no receiver')
    }
    await this.record(delivery, endpoint, { status, durationMs, error, detail })
    return { result: { status, error }, next: await this.nextParked(endpoint.account_id) }
  }

  /**
   * Sandbox: an attempt a `webhook.delivery` fault fires for meets a receiver that does not answer. Nothing is sent;
   * the attempt takes the timeout and fails as the sender's own timeout fails it.
   */
  private async injectedTimeout(endpoint: WebhookEndpoint, eventType: string): Promise<void> {
    const params = { endpoint: String(endpoint.id), event: eventType }
    const fault = await this.opts.faults?.('webhook.delivery', endpoint.account_id, params)
    if (!fault) return
    const { timeoutMs } = this.opts.sender
    await sleep(timeoutMs)
    const host = bareHost(new URL(endpoint.url).hostname)
    const why = fault.status_description ? ` (${fault.status_description})` : ''
    throw new SendError(`Connection to ${host} failed: no answer within ${timeoutMs} ms${why}`, timeoutMs)
  }

  /** The account's parked delivery that is due and whose endpoint has a free slot, for the chain to take next. */
  private async nextParked(accountId: number) {
    const now = iso(this.clock.now())
    const row = await repo.oldestParked(this.db, accountId, now, this.opts.endpointConcurrency)
    return row ? { deliveryId: row.id, accountId } : null
  }

  /** Queues a job for the longest parked delivery of accounts whose chains stopped (a crash): the safety net. */
  async restartParked(now: Date): Promise<number> {
    const stale = await repo.accountsParkedSince(this.db, iso(new Date(now.getTime() - ATTEMPT_LEASE_MS * 2)))
    let n = 0
    for (const e of stale) {
      if ((await repo.inFlight(this.db, { account: e.account_id }, iso(now))) > 0) continue
      const next = await this.nextParked(e.account_id)
      if (!next) continue
      await repo.queueAttempt(this.db, next.accountId, next.deliveryId, now, now)
      n++
    }
    return n
  }

  private async record(
    delivery: { id: number; account_id: number; attempts: number; created_at: string },
    endpoint: WebhookEndpoint,
    outcome: { status: number | null; durationMs: number; error: string | null; detail: string | null },
  ): Promise<void> {
    const now = this.clock.now()
    const base = {
      response_status: outcome.status,
      duration_ms: outcome.durationMs,
      last_error: outcome.error,
      error_detail: outcome.detail,
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
    const to = await repo.mainUserEmail(this.db, endpoint.account_id)
    // The endpoint is disabled with the mail that tells its owner, or not at all.
    await this.db.transaction().execute(async (trx) => {
      await repo.updateEndpoint(trx, endpoint.account_id, endpoint.id, {
        enabled: 0,
        disabled_reason: reason,
        updated_at: iso(now),
      })
      if (!to) return
      await this.mail.send(trx, {
        to,
        subject: `Webhook endpoint ${endpoint.id} was disabled`,
        text:
          `Deliveries to your webhook endpoint ${endpoint.url} kept failing for about three days, so we disabled it.\n` +
          `${reason}.\nFix the receiver, then enable the endpoint again (PUT /account/webhooks/${endpoint.id}` +
          ' with {"enabled": true}) and redeliver the failed deliveries.',
        kind: 'webhook.disabled',
        accountId: endpoint.account_id,
      })
    })
    this.log.warn({ accountId: endpoint.account_id, webhookId: endpoint.id }, 'webhook endpoint disabled')
  }
}
