import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import type { DryRun } from '../../lib/dry-run.js'
import { emitEvent } from '../webhooks/webhook-events.js'
import { domainOrderEvent } from './order-events.js'
import * as repo from './orders.repository.js'
import { PROCESS_ORDER, type OrderItemProcessor, type OrdersService, type OrderView } from './orders.service.js'
import type { OrderItemType } from './orders.tables.js'

/** The processor of each item type an area provisions. */
export type OrderProcessors = Partial<Record<OrderItemType, OrderItemProcessor>>

/** What OrderProcessingService is built on. */
export interface OrderProcessingServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  /** The stored orders: read, and their processing queued again after a correction. */
  orders: OrdersService
  /** The areas' processors (domains, certificates, VPS), which place their orders through `orders`. */
  processors: OrderProcessors
}

/**
 * The processing of orders: the job that runs each item through its area's processor, and the corrections of
 * `PUT /orders/{id}`. Built after the areas, which place orders through OrdersService and implement OrderItemProcessor.
 */
export class OrderProcessingService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly orders: OrdersService
  private readonly processors: OrderProcessors

  constructor(deps: OrderProcessingServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.orders = deps.orders
    this.processors = deps.processors
  }

  /** The job that provisions the items of an order. */
  readonly processJob = defineJob({
    ...PROCESS_ORDER,
    handle: ({ orderId }) => this.processOrder(orderId),
  })

  /** The job: runs each pending item through its processor, then settles the order's status. */
  async processOrder(orderId: number): Promise<{ status: string }> {
    const order = await repo.findOrderForJob(this.db, orderId)
    if (!order || order.status === 'completed' || order.status === 'cancelled')
      return { status: order?.status ?? 'missing' }
    await repo.setOrderStatus(this.db, orderId, 'processing', iso(this.clock.now()))
    const items = await repo.itemsOf(this.db, order.account_id, [orderId])
    for (const item of items.filter((i) => i.status === 'pending')) {
      const processor = this.processors[item.type]
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
    const view = await this.orders.get(accountId, orderId)
    if (view.order.status === 'completed') throw errors.orderCompleted()
    if (view.order.status === 'cancelled') throw errors.orderCancelled()
    const item = view.items.find((i) => i.id === input.cart_id)
    if (!item) throw errors.cartItemNotFound()
    if (item.status === 'done') throw errors.cartItemDone()
    const { cart_id: _cartId, ...fix } = input
    const processor = this.processors[item.type]
    const details = processor?.applyFix ? await processor.applyFix(accountId, item.details, fix) : item.details
    const now = iso(this.clock.now())
    if (opts.dryRun) {
      const fixed = { ...item, status: 'pending' as const, errors: [], details, updated_at: now }
      return { order: { ...view.order, status: 'open' }, items: view.items.map((i) => (i.id === item.id ? fixed : i)) }
    }
    await this.db.transaction().execute(async (trx) => {
      await repo.updateItem(trx, item.id, { status: 'pending', errors: '[]', details: JSON.stringify(details), now })
      await repo.setOrderStatus(trx, orderId, 'open', now)
      await this.orders.queueProcessing(trx, accountId, orderId)
    })
    this.jobs.poke()
    return this.orders.get(accountId, orderId)
  }
}
