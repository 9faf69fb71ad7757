import { randomBytes } from 'node:crypto'
import { iso } from '../../clock.js'
import type { Db } from '../../db/database.js'
import * as repo from './webhooks.repository.js'

/** Every event a webhook endpoint can subscribe to. */
export const EVENT_TYPES = [
  'domain.order.completed',
  'domain.order.failed',
  'domain.status.changed',
  'domain.expiring',
  'dns.zone.changed',
  'vps.task.completed',
  'vps.task.failed',
  'vps.status.changed',
  'certificate.issued',
  'certificate.failed',
  'certificate.expiring',
  'invoice.issued',
  'invoice.paid',
  'ticket.replied',
] as const

/** The name of an event. */
export type EventType = (typeof EVENT_TYPES)[number]

/** The event `POST /account/webhooks/{id}/test` sends; not subscribable. */
export const TEST_EVENT = 'webhook.test' as const

/** The job kind that makes one delivery attempt. */
export const DELIVERY_JOB = 'webhooks.deliver'

// A new `webhook-id`: `msg_` and 24 random base64url characters.
const newMessageId = (): string => `msg_${randomBytes(18).toString('base64url')}`

/** The body of an event as sent: the Standard Webhooks shape. */
export interface EventBody {
  type: string
  timestamp: string
  data: Record<string, unknown>
}

/**
 * Records an event of an account in the caller's transaction (the outbox), with one delivery, and its job, for
 * each enabled endpoint subscribed to it: the event exists if and only if the change that caused it committed.
 * `resource` is the resource's API representation (or a function reading it, called only when an endpoint
 * listens); the account's customer number is added as `account`.
 * Nothing is written when no endpoint listens. With `uid` (an event that must be sent once however often its cause
 * is seen, as by a scan that runs again), an event of that uid recorded before is not recorded again.
 */
export async function emitEvent(
  trx: Db,
  accountId: number,
  type: EventType,
  resource: Record<string, unknown> | (() => Promise<Record<string, unknown>>),
  at: Date,
  uid?: string,
): Promise<void> {
  const endpoints = (await repo.enabledEndpoints(trx, accountId)).filter((e) => subscribes(e.events, type))
  if (endpoints.length === 0) return
  const account = await repo.customerNumber(trx, accountId)
  const data = typeof resource === 'function' ? await resource() : resource
  const body: EventBody = { type, timestamp: iso(at), data: { ...data, account } }
  await recordEvent(trx, accountId, body, endpoints, at, uid)
}

/**
 * Writes an event and a delivery and its job per endpoint (the endpoints are the caller's choice). With `uid`, an
 * event of that uid that exists already is left as it is and nothing is written.
 */
export async function recordEvent(
  trx: Db,
  accountId: number,
  body: EventBody,
  endpoints: { id: number }[],
  at: Date,
  uid?: string,
): Promise<number[]> {
  const event = await repo.insertEvent(trx, {
    account_id: accountId,
    uid: uid ?? newMessageId(),
    type: body.type,
    payload: JSON.stringify(body),
    created_at: iso(at),
  })
  if (!event) return []
  const ids: number[] = []
  for (const e of endpoints) ids.push(await repo.insertDelivery(trx, accountId, e.id, event.id, at))
  return ids
}

// True when an endpoint's stored event list (JSON) includes `type` or `*`.
function subscribes(events: string, type: string): boolean {
  const list = JSON.parse(events) as string[]
  return list.includes('*') || list.includes(type)
}
