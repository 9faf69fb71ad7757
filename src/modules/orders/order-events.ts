import type { EventSamplers, EventType } from '../webhooks/webhook-events.js'
import type { OrderItemError } from './orders.tables.js'
import * as repo from './orders.repository.js'

/** The webhook event of a processed domain item: completed or failed, with the order, the item and its errors. */
export function domainOrderEvent(
  item: { id: number; order_id: number; name: string; status: string },
  outcome: { errors: unknown[]; result?: unknown },
): [EventType, Record<string, unknown>] {
  const failed = outcome.errors.length > 0
  const data = { order_id: item.order_id, cart_id: item.id, domain: item.name, status: item.status }
  return [failed ? 'domain.order.failed' : 'domain.order.completed', { ...data, errors: outcome.errors }]
}

// The error of a failed sample made from an item that did not fail.
const SAMPLE_ERROR: OrderItemError = { code: 'registry', description: 'The registry refused the registration' }

/**
 * The domain order events' data from the account's newest domain item (one that ended so, when there is one), as
 * the order processing sends them (sandbox triggers).
 */
export const orderEventSamplers: EventSamplers = {
  'domain.order.completed': async (db, accountId) => {
    const item =
      (await repo.latestItem(db, accountId, 'domain', 'done')) ?? (await repo.latestItem(db, accountId, 'domain'))
    return item && { data: domainOrderEvent({ ...item, status: 'done' }, { errors: [] })[1] }
  },
  'domain.order.failed': async (db, accountId) => {
    const item =
      (await repo.latestItem(db, accountId, 'domain', 'error')) ?? (await repo.latestItem(db, accountId, 'domain'))
    const errors = item?.errors.length ? item.errors : [SAMPLE_ERROR]
    return item && { data: domainOrderEvent({ ...item, status: 'error' }, { errors })[1] }
  },
}
