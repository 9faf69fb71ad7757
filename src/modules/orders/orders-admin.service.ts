import type { Kysely } from 'kysely'
import { present } from '../../lib/invariant.js'
import { iso } from '../../clock.js'
import type { Clock } from '../../clock.js'
import type { Db } from '../../db/database.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import type { DecodedJob } from '../../jobs/jobs.repository.js'
import type { JobRunner } from '../../jobs/runner.js'
import { pageOf, pagination } from '../../lib/paging.js'
import type { InvoiceSummary } from '../account/invoices/invoices.service.js'
import * as repo from './orders.repository.js'
import { orderTime, processKey, type OrderCharger, type OrdersService } from './orders.service.js'
import type { Order, OrderStatus } from './orders.tables.js'

/** What the operator's view of orders needs of the invoices. */
export interface OrderInvoices extends OrderCharger {
  ofOrder(accountId: number, orderId: number, db?: Db): Promise<InvoiceSummary[]>
  /** Cancels the open invoices of an order, in the transaction that cancels it. */
  cancelOfOrder(trx: Db, accountId: number, orderId: number): Promise<void>
}

/** An order as the admin API shows it in a list. */
export interface AdminOrderRow {
  id: number
  account_id: number
  status: OrderStatus
  total_cents: number
  created: string
  updated: string
  completed: string | null
}

const row = (o: Order): AdminOrderRow => ({
  id: o.id,
  account_id: o.account_id,
  status: o.status,
  total_cents: o.total_cents,
  created: present(orderTime(o.created_at), `created_at of order ${o.id}`),
  updated: present(orderTime(o.updated_at), `updated_at of order ${o.id}`),
  completed: orderTime(o.completed_at),
})

const jobRow = (j: DecodedJob) => ({
  id: j.id,
  status: j.status,
  attempts: j.attempts,
  max_attempts: j.max_attempts,
  run_at: j.run_at,
  last_error: j.last_error,
})

/** What OrdersAdminService is built on. */
export interface OrdersAdminServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  orders: OrdersService
  invoices: OrderInvoices
}

/**
 * The operator's orders of every account: a list, one order with its items, invoices and processing jobs, and the
 * repairs of an order left behind: its processing queued again (charged first when it has no invoice), or the order
 * cancelled with its undelivered items, which frees what they held (a domain name's open order).
 */
export class OrdersAdminService {
  constructor(private readonly deps: OrdersAdminServiceDeps) {}

  async list(query: { page?: number; limit?: number; status?: OrderStatus; account?: number }) {
    const { db } = this.deps
    const page = pageOf(query)
    const filter: repo.AdminOrderFilter = { status: query.status }
    if (query.account !== undefined) filter.accountId = (await repo.accountIdOf(db, query.account)) ?? -1
    const total = await repo.adminCountOrders(db, filter)
    const pag = pagination(page, total)
    const rows = await repo.adminListOrders(db, filter, page.limit, page.offset)
    return { orders: rows.map(row), pagination: pag }
  }

  /** One order of any account, with its items, its invoices and its processing jobs. */
  async get(orderId: number, db: Db = this.deps.db) {
    const order = await repo.findOrderForJob(db, orderId)
    if (!order) throw errors.orderNotFound()
    const items = await repo.itemsOf(db, order.account_id, [orderId])
    return {
      ...row(order),
      items: items.map((i) => ({
        cart_id: i.id,
        type: i.type,
        name: i.name,
        status: i.status,
        price_cents: i.price_cents,
        errors: i.errors,
      })),
      invoices: (await this.deps.invoices.ofOrder(order.account_id, orderId, db)).map((inv) => ({
        invoice_nr: inv.invoice_nr,
        total_price: inv.total_price,
        payment_status: inv.payment_status,
        payment_url: inv.payment_url,
      })),
      jobs: (await this.deps.jobs.ofKey(processKey(orderId), db)).map(jobRow),
    }
  }

  /**
   * Queues the processing of an order that is not completed or cancelled (once: a queued job is kept), after
   * making its invoice when it has none (an order stranded before it was charged).
   */
  async retry(orderId: number) {
    const { db, orders, jobs } = this.deps
    const order = await repo.findOrderForJob(db, orderId)
    if (!order) throw errors.orderNotFound()
    if (order.status === 'completed') throw errors.orderCompleted()
    if (order.status === 'cancelled') throw errors.orderCancelled()
    const invoices = this.deps.invoices
    const charged = (await invoices.ofOrder(order.account_id, orderId)).length > 0
    const charge = charged ? null : await invoices.chargeFor(order.account_id)
    const invoiceId = await db.transaction().execute(async (trx) => {
      const items = await repo.itemsOf(trx, order.account_id, [orderId])
      const lines = items.map((i) => ({ description: `${i.type} ${i.name}`, amountCents: i.price_cents }))
      const made = charge ? await charge(trx, { orderId, lines }) : null
      await orders.queueProcessing(trx, order.account_id, orderId)
      return made?.invoiceId ?? null
    })
    jobs.poke()
    if (invoiceId !== null) await invoices.issue(order.account_id, invoiceId)
    return this.get(orderId)
  }

  /**
   * Cancels an order that is not completed: its items not delivered are cancelled (the names they held are free to
   * order again), its queued processing is dropped and its open invoices are cancelled, in one transaction. Refused
   * while its processing runs.
   */
  async cancel(orderId: number) {
    const { db, clock, jobs } = this.deps
    const order = await repo.findOrderForJob(db, orderId)
    if (!order) throw errors.orderNotFound()
    if (order.status === 'completed') throw errors.orderCompleted()
    const key = processKey(orderId)
    if ((await jobs.ofKey(key)).some((j) => j.status === 'running')) throw errors.orderBeingProcessed()
    const now = iso(clock.now())
    await db.transaction().execute(async (trx) => {
      await repo.cancelOpenItems(trx, orderId, now)
      await repo.setOrderStatus(trx, orderId, 'cancelled', now)
      await jobs.dropQueued(trx, key, 'The order was cancelled')
      // Its invoice with it: a cancelled order is not charged.
      await this.deps.invoices.cancelOfOrder(trx, order.account_id, orderId)
    })
    return this.get(orderId)
  }
}
