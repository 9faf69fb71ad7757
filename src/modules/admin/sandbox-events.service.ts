import type { Kysely } from 'kysely'
import { iso, type Clock } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import type { JobRunner } from '../../jobs/runner.js'
import * as iamRepo from '../iam/iam.repository.js'
import { EVENT_TYPES, emitEvent, newMessageId, type EventSamplers, type EventType } from '../webhooks/webhook-events.js'
import { eventExample } from '../webhooks/webhooks.openapi.js'

/** What to trigger: an event type, the account (optional when there is one), data merged over the payload. */
export interface TriggerInput {
  type: string
  customer_number?: number
  data?: Record<string, unknown>
}

/** A triggered event as recorded (nothing is recorded when no endpoint receives it). */
export interface TriggeredEvent {
  /** The event's `webhook-id`. */
  id: string
  type: EventType
  timestamp: string
  customer_number: number
  /** `resource`: the view of a resource of the account; `example`: the documented example (it has none). */
  source: 'resource' | 'example'
  /** The `data` sent, with `account`. */
  data: Record<string, unknown>
  /** Endpoints that receive it: enabled, subscribed to the type, their owner allowed to read it. */
  endpoints: number
}

const isEventType = (type: string): type is EventType => (EVENT_TYPES as readonly string[]).includes(type)

/** What SandboxEventsService is built on. */
export interface SandboxEventsServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  samplers: EventSamplers
}

/**
 * Sandbox triggers: any webhook event sent to an account's endpoints, so an integrator tests a receiver for every
 * event without staging its cause. The payload is the view of the account's own resource that the real cause
 * sends (the area's sampler), or the documented example when the account has none of its kind. It is emitted
 * as the real cause emits it (`emitEvent`): to the subscribed endpoints whose owner may read it, as jobs.
 */
export class SandboxEventsService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly samplers: EventSamplers

  constructor(deps: SandboxEventsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.samplers = deps.samplers
  }

  async trigger(input: TriggerInput): Promise<TriggeredEvent> {
    const { type } = input
    if (!isEventType(type)) throw errors.adminUnknownEventType(type, EVENT_TYPES)
    const account = await this.account(input.customer_number)
    const now = this.clock.now()
    const id = newMessageId()
    const sent = await this.db.transaction().execute(async (trx) => {
      const sample = await this.samplers[type]?.(trx, account.id, now)
      const data = { ...(sample?.data ?? eventExample(type)), ...input.data }
      const readerId = sample && 'readerId' in sample ? { readerId: sample.readerId } : {}
      const endpoints = await emitEvent(trx, account.id, type, data, now, { uid: id, ...readerId })
      return { data, endpoints, source: sample ? ('resource' as const) : ('example' as const) }
    })
    if (sent.endpoints > 0) this.jobs.poke()
    return {
      id,
      type,
      timestamp: iso(now),
      customer_number: account.customer_number,
      source: sent.source,
      data: { ...sent.data, account: account.customer_number },
      endpoints: sent.endpoints,
    }
  }

  // The account named, or the only one there is.
  private async account(customerNumber: number | undefined) {
    if (customerNumber !== undefined) {
      const row = await iamRepo.findAccountByCustomerNumber(this.db, customerNumber)
      if (!row) throw errors.accountNotFound()
      return row
    }
    const first = await iamRepo.firstAccounts(this.db, 2)
    if (first.length === 0) throw errors.adminNoAccount()
    if (first.length > 1) throw errors.adminNameTheAccount(await iamRepo.countAccounts(this.db))
    return first[0]
  }
}
