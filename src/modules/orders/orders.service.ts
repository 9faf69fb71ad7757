import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../../clock.js'
import { iso, ymdhms } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { Type } from 'typebox'
import type { JobKind, JobRunner } from '../../jobs/runner.js'
import * as repo from './orders.repository.js'
import type { Order, OrderItemError, OrderItemType } from './orders.tables.js'
export type { OrderItemError } from './orders.tables.js'
import type { OrderItem } from './orders.repository.js'
import type { Db } from '../../db/database.js'
import { crashPoint } from '../../ops/crash-points.js'

/** What a processor sees of an item. */
export interface OrderItemForProcessing {
  id: number
  orderId: number
  accountId: number
  type: OrderItemType
  name: string
  details: unknown
}

/**
 * Provisions one kind of order item: the port each area's order processing implements (domains, certificates, VPS),
 * handed to OrderProcessingService when it is built.
 * `process` returns an empty `errors` array on success; a non-empty one leaves the order open with
 * `status: error` until a `PUT /orders/{id}` fixes the item. Throwing means a passing failure: the job retries.
 */
export interface OrderItemProcessor {
  process(item: OrderItemForProcessing): Promise<{ errors: OrderItemError[]; result?: unknown }>
  /**
   * Merges a correction from `PUT /orders/{id}` (`{domain: {...}, hosting: {...}}`) into the item's details. Every id
   * or name the correction refers to is checked against the account first: another account's is answered exactly
   * as a missing one, and nothing is stored.
   */
  applyFix?(accountId: number, details: unknown, fix: unknown): Promise<unknown>
}

/** Charges an order: the invoice service implements it. */
export interface OrderCharger {
  /** Reads what the invoice needs, outside any transaction; answers the writer of its rows, for the order's. */
  chargeFor(accountId: number): Promise<
    (
      trx: Db,
      input: { orderId: number; lines: { description: string; amountCents: number }[] },
    ) => Promise<{
      invoiceId: number
    }>
  >
  /**
   * Issues the committed invoice (its payment, its mail); the job queued with the invoice does it should this fail
   * or the process die first.
   */
  issue(accountId: number, invoiceId: number): Promise<void>
}

/** One item of a new order. */
export interface NewOrderItem {
  type: OrderItemType
  name: string
  details: unknown
  priceCents: number
  /** The invoice line; defaults to `<type> <name>`. */
  description?: string
}

/** An order with its items, as the routes show it. */
export interface OrderView {
  order: Order
  items: OrderItem[]
}

/** The job that provisions the items of an order (queued here; run by OrderProcessingService's processJob). */
export const PROCESS_ORDER = {
  name: 'orders.process',
  payload: Type.Object({ orderId: Type.Integer() }),
} satisfies JobKind

/** What OrdersService is built on. */
export interface OrdersServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  log: Logger
  /** Charges new orders (the invoice service). */
  charger: OrderCharger
}

/**
 * Orders of every area: stores them, charges them and queues their processing (OrderProcessingService runs it through
 * the areas' processors).
 */
export class OrdersService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly log: Logger
  private readonly charger: OrderCharger

  constructor(deps: OrdersServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.log = deps.log
    this.charger = deps.charger
  }

  /**
   * Stores an order with its items, charges it (unless `charge: false`, for demo data) and queues its processing,
   * all in one transaction: a process that dies on the way leaves the whole order or nothing of it.
   */
  async createOrder(
    accountId: number,
    items: NewOrderItem[],
    opts: { charge?: boolean } = {},
  ): Promise<{ orderId: number }> {
    if (items.length === 0) throw new Error('An order needs at least one item')
    const now = iso(this.clock.now())
    const charger = opts.charge !== false ? this.charger : null
    const charge = charger ? await charger.chargeFor(accountId) : null
    const { orderId, invoiceId } = await this.db.transaction().execute(async (trx) => {
      const { id } = await repo.insertOrder(trx, {
        account_id: accountId,
        status: 'open',
        total_cents: items.reduce((sum, i) => sum + i.priceCents, 0),
        created_at: now,
      })
      for (const item of items) {
        await repo.insertItem(trx, {
          order_id: id,
          account_id: accountId,
          type: item.type,
          name: item.name,
          details: JSON.stringify(item.details ?? {}),
          price_cents: item.priceCents,
          status: 'pending',
          errors: '[]',
          result: null,
          created_at: now,
          updated_at: now,
        })
      }
      crashPoint('orders.create.stored')
      const lines = items.map((i) => ({
        description: i.description ?? `${i.type} ${i.name}`,
        amountCents: i.priceCents,
      }))
      const invoice = charge ? await charge(trx, { orderId: id, lines }) : null
      await this.queueProcessing(trx, accountId, id)
      return { orderId: id, invoiceId: invoice?.invoiceId ?? null }
    })
    crashPoint('orders.create.committed')
    this.jobs.poke()
    // A failure here leaves the invoice to its job: the order itself is placed.
    if (invoiceId !== null)
      await this.charger.issue(accountId, invoiceId).catch((err: unknown) => {
        this.log.warn({ err, orderId, invoiceId }, 'invoice of a new order not issued, its job retries')
      })
    return { orderId }
  }

  /** Queues the processing of an order in the caller's transaction; once while it waits (the order's key). */
  async queueProcessing(trx: Db, accountId: number, orderId: number): Promise<number> {
    return this.jobs.enqueue(PROCESS_ORDER, { orderId }, { trx, accountId, key: processKey(orderId) })
  }

  /** True when the account has an item of this type and name that is not done yet (an order in progress). */
  async hasPendingItem(accountId: number, type: OrderItemType, name: string): Promise<boolean> {
    return (await repo.findPendingByName(this.db, accountId, type, name)).length > 0
  }

  /** The account's orders that are not completed, oldest first. */
  async listOpen(accountId: number): Promise<OrderView[]> {
    const orders = await repo.listOpenOrders(this.db, accountId)
    const items = await repo.itemsOf(
      this.db,
      accountId,
      orders.map((o) => o.id),
    )
    return orders.map((order) => ({ order, items: items.filter((i) => i.order_id === order.id) }))
  }

  /** One order of the account; another account's order is `Order not found`. */
  async get(accountId: number, orderId: number): Promise<OrderView> {
    const order = await repo.findOrder(this.db, accountId, orderId)
    if (!order) throw errors.orderNotFound()
    return { order, items: await repo.itemsOf(this.db, accountId, [orderId]) }
  }
}

/** The key of the processing job of an order. */
export const processKey = (orderId: number) => `order:${orderId}`

/** `YYYY-MM-DD HH:MM:SS` of a stored time, or null. */
export const orderTime = (stored: string | null): string | null => (stored ? ymdhms(new Date(stored)) : null)
