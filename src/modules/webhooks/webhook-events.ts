import { randomBytes } from 'node:crypto'
import { iso } from '../../clock.js'
import type { Db } from '../../db/database.js'
import { parsePermissions, type Permission } from '../iam/permissions.js'
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

/**
 * The permission area a user needs to read each event: the area of the routes that show what it tells (a domain
 * order's outcome is read under `order`, where it was placed). Permissions are per area, so an area holds every
 * resource of its kind in the account (a sub-user with `vps` reads every VPS of the account).
 */
export const EVENT_AREAS: Readonly<Record<EventType, Permission>> = {
  'domain.order.completed': 'order',
  'domain.order.failed': 'order',
  'domain.status.changed': 'domains',
  'domain.expiring': 'domains',
  'dns.zone.changed': 'domains',
  'vps.task.completed': 'vps',
  'vps.task.failed': 'vps',
  'vps.status.changed': 'vps',
  'certificate.issued': 'certificates',
  'certificate.failed': 'certificates',
  'certificate.expiring': 'certificates',
  'invoice.issued': 'account-invoices',
  'invoice.paid': 'account-invoices',
  'ticket.replied': 'account-tickets',
}

/** A user as far as reading events goes; `null` fields for an endpoint whose owner was deleted. */
export interface EventReader {
  userId: number | null
  isMainUser: boolean | null
  /** The permission map as stored (JSON text), or already read. */
  permissions: string | Record<string, boolean> | null
}

/**
 * True when `user` may read an event of `type`: a main user reads every event, a sub-user those of the areas it
 * holds, nobody (an endpoint whose owner was deleted) none. `readerId` narrows an event whose resource only its
 * user may read besides main users (a ticket: the sub-user who opened it; 0: main users only); null for none.
 * `webhook.test` and any name outside `EVENT_TYPES` are no event of an area: false.
 */
export function mayRead(user: EventReader, type: string, readerId: number | null = null): boolean {
  if (!Object.hasOwn(EVENT_AREAS, type)) return false
  if (user.isMainUser) return true
  if (user.permissions === null || (readerId !== null && user.userId !== readerId)) return false
  const map = typeof user.permissions === 'string' ? parsePermissions(user.permissions) : user.permissions
  return map[EVENT_AREAS[type as EventType]] === true
}

/** The event `POST /account/webhooks/{id}/test` sends; not subscribable. */
export const TEST_EVENT = 'webhook.test' as const

export { DELIVERY_JOB } from './webhook-delivery-job.js'

// A new `webhook-id`: `msg_` and 24 random base64url characters.
export const newMessageId = (): string => `msg_${randomBytes(18).toString('base64url')}`

/** How an event is recorded besides its type and data. */
export interface EmitOptions {
  /** An event that must be sent once however often its cause is seen (a scan that runs again): its `webhook-id`. */
  uid?: string
  /**
   * Besides main users, the only sub-user who may read the event's resource (a ticket: the user who opened it, or
   * null when no sub-user may); absent when every user holding the event's area may.
   */
  readerId?: number | null
}

/** The body of an event as sent: the Standard Webhooks shape. */
export interface EventBody {
  type: string
  timestamp: string
  data: Record<string, unknown>
}

/**
 * Records an event of an account in the caller's transaction (the outbox), with one delivery, and its job, for
 * each enabled endpoint subscribed to it whose owner may read it now (`mayRead`; the endpoints and their owners'
 * permissions in one query): the event exists if and only if the change that caused it committed.
 * `resource` is the resource's API representation (or a function reading it, called only when an endpoint
 * listens); the account's customer number is added as `account`.
 * Nothing is written when no endpoint listens. With `uid`, an event of that uid recorded before is not recorded
 * again. The delivery job checks the owner's permission again before each attempt (it may have been removed).
 * Returns how many deliveries were recorded.
 */
export async function emitEvent(
  trx: Db,
  accountId: number,
  type: EventType,
  resource: Record<string, unknown> | (() => Promise<Record<string, unknown>>),
  at: Date,
  opts: EmitOptions = {},
): Promise<number> {
  // null: no sub-user may read it; stored as 0, the id of no user (null in the table is "no narrowing").
  const readerId = opts.readerId === undefined ? null : (opts.readerId ?? 0)
  const endpoints = (await repo.enabledEndpoints(trx, accountId)).filter(
    (e) => subscribes(e.events, type) && mayRead(e.owner, type, readerId),
  )
  if (endpoints.length === 0) return 0
  const account = await repo.customerNumber(trx, accountId)
  const data = typeof resource === 'function' ? await resource() : resource
  const body: EventBody = { type, timestamp: iso(at), data: { ...data, account } }
  return (await recordEvent(trx, accountId, body, endpoints, at, { uid: opts.uid, readerId })).length
}

/** An event's data as its real cause would send it, read from a resource of the account, and how it is emitted. */
export interface EventSample {
  data: Record<string, unknown>
  /** As `EmitOptions.readerId`: the one sub-user who may read the resource, for an event that narrows it. */
  readerId?: number | null
}

/**
 * Reads the sample of one event from the account's own resources (the one in the state the event tells of when
 * there is one, else the latest of its kind), with the view the real cause sends; undefined when it has none.
 */
export type EventSampler = (db: Db, accountId: number, now: Date) => Promise<EventSample | undefined>

/** The samplers an area gives for the events it causes. */
export type EventSamplers = Partial<Record<EventType, EventSampler>>

/**
 * Writes an event and a delivery and its job per endpoint (the endpoints are the caller's choice). With `uid`, an
 * event of that uid that exists already is left as it is and nothing is written. `readerId` is stored as given
 * (0 for main users only).
 */
export async function recordEvent(
  trx: Db,
  accountId: number,
  body: EventBody,
  endpoints: { id: number }[],
  at: Date,
  opts: { uid?: string; readerId?: number | null } = {},
): Promise<number[]> {
  const event = await repo.insertEvent(trx, {
    account_id: accountId,
    uid: opts.uid ?? newMessageId(),
    type: body.type,
    payload: JSON.stringify(body),
    reader_id: opts.readerId ?? null,
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
