import type { Kysely } from 'kysely'
import { present } from '../../lib/invariant.js'
import type { Logger } from 'pino'
import type { Clock } from '../../clock.js'
import { iso, ymdhms } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import * as repo from './orders.repository.js'
import { emitEvent } from '../webhooks/webhook-events.js'
import { domainOrderEvent } from './order-events.js'
import type { Order, OrderItemError, OrderItemType } from './orders.tables.js'
export type { OrderItemError } from './orders.tables.js'
import type { OrderItem } from './orders.repository.js'
import type { DryRun } from '../../lib/dry-run.js'
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
 * Provisions one kind of order item. Each area registers one in createContext.
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

/** The job that provisions the items of an order. */
export const PROCESS_JOB = 'orders.process'

/** Orders of every area: stores them, charges them, and provisions their items through the areas' processors. */
export class OrdersService {
  private readonly processors = new Map<string, OrderItemProcessor>()
  private charger: OrderCharger | null = null

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly log: Logger,
  ) {}

  /** The job that provisions the items of an order. */
  readonly processJob = defineJob({
    name: PROCESS_JOB,
    payload: Type.Object({ orderId: Type.Integer() }),
    handle: ({ orderId }) => this.processOrder(orderId),
  })

  /** Registers the processor of one item type (one per type). */
  registerProcessor(type: string, processor: OrderItemProcessor): void {
    if (this.processors.has(type)) throw new Error(`An order processor for ${type} exists already`)
    this.processors.set(type, processor)
  }

  /** Sets who charges new orders (the invoice service). */
  setCharger(charger: OrderCharger): void {
    this.charger = charger
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
    for (const item of items)
      if (!this.processors.has(item.type)) throw new Error(`No order processor for ${item.type}`)
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
      await present(charger, 'the order charger')
        .issue(accountId, invoiceId)
        .catch((err: unknown) => {
          this.log.warn({ err, orderId, invoiceId }, 'invoice of a new order not issued, its job retries')
        })
    return { orderId }
  }

  /** Queues the processing of an order in the caller's transaction; once while it waits (the order's key). */
  async queueProcessing(trx: Db, accountId: number, orderId: number): Promise<number> {
    return this.jobs.enqueue(this.processJob, { orderId }, { trx, accountId, key: processKey(orderId) })
  }

  /** The job: runs each pending item through its processor, then settles the order's status. */
  async processOrder(orderId: number): Promise<{ status: string }> {
    const order = await repo.findOrderForJob(this.db, orderId)
    if (!order || order.status === 'completed' || order.status === 'cancelled')
      return { status: order?.status ?? 'missing' }
    await repo.setOrderStatus(this.db, orderId, 'processing', iso(this.clock.now()))
    const items = await repo.itemsOf(this.db, order.account_id, [orderId])
    for (const item of items.filter((i) => i.status === 'pending')) {
      const processor = this.processors.get(item.type)
      if (!processor) throw new Error(`No order processor for ${item.type}`)
      const outcome = await processor.process({
        id: item.id,
        orderId,
        accountId: item.account_id,
        type: item.type,
        name: item.name,
        details: item.details,
      })
      const failed = outcome.errors.length > 0
      item.status = failed ? 'error' : 'done'
      const at = this.clock.now()
      await this.db.transaction().execute(async (trx) => {
        await repo.updateItem(trx, item.id, {
          status: item.status,
          errors: JSON.stringify(outcome.errors),
          result: outcome.result === undefined ? null : JSON.stringify(outcome.result),
          now: iso(at),
        })
        if (item.type === 'domain') await emitEvent(trx, item.account_id, ...domainOrderEvent(item, outcome), at)
      })
    }
    const status = items.some((i) => i.status === 'error') ? 'error' : 'completed'
    await repo.setOrderStatus(this.db, orderId, status, iso(this.clock.now()))
    return { status }
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

  /**
   * Applies a correction to one item of an open order and processes the order again. A dry run answers the
   * order as the correction would leave it before processing, without storing the correction or queueing the job.
   */
  async fix(
    accountId: number,
    orderId: number,
    input: { cart_id: number } & Record<string, unknown>,
    opts: DryRun = {},
  ): Promise<OrderView> {
    const view = await this.get(accountId, orderId)
    if (view.order.status === 'completed') throw errors.orderCompleted()
    if (view.order.status === 'cancelled') throw errors.orderCancelled()
    const item = view.items.find((i) => i.id === input.cart_id)
    if (!item) throw errors.cartItemNotFound()
    if (item.status === 'done') throw errors.cartItemDone()
    const { cart_id: _cartId, ...fix } = input
    const processor = this.processors.get(item.type)
    const details = processor?.applyFix ? await processor.applyFix(accountId, item.details, fix) : item.details
    const now = iso(this.clock.now())
    if (opts.dryRun) {
      const fixed = { ...item, status: 'pending' as const, errors: [], details, updated_at: now }
      return { order: { ...view.order, status: 'open' }, items: view.items.map((i) => (i.id === item.id ? fixed : i)) }
    }
    await this.db.transaction().execute(async (trx) => {
      await repo.updateItem(trx, item.id, { status: 'pending', errors: '[]', details: JSON.stringify(details), now })
      await repo.setOrderStatus(trx, orderId, 'open', now)
      await this.queueProcessing(trx, accountId, orderId)
    })
    this.jobs.poke()
    return this.get(accountId, orderId)
  }
}

/** The key of the processing job of an order. */
export const processKey = (orderId: number) => `order:${orderId}`

/** `YYYY-MM-DD HH:MM:SS` of a stored time, or null. */
export const orderTime = (stored: string | null): string | null => (stored ? ymdhms(new Date(stored)) : null)
