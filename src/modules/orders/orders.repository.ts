import type { Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import { jsonColumns, type Decoded } from '../../db/json-columns.js'
import type {
  OrderItemError,
  OrderItemRow,
  OrderItemsTable,
  OrderItemStatus,
  OrderItemType,
  OrderStatus,
} from './orders.tables.js'

/** Orders and their items. Every read of account data takes the account id; item reads answer decoded rows. */

/** The JSON columns of an order item row, decoded. */
export interface OrderItemJson {
  details: unknown
  errors: OrderItemError[]
  result: unknown
}

/** An order item row with its JSON columns decoded. */
export type OrderItem = Decoded<OrderItemRow, OrderItemJson>

/** Decodes the JSON columns of (part of) an order item row. */
export const decodeOrderItem = jsonColumns<OrderItemJson>('details', 'errors', 'result')

/** Stores a new order. */
export const insertOrder = (
  db: Db,
  row: { account_id: number; status: OrderStatus; total_cents: number; created_at: string },
) =>
  db
    .insertInto('orders')
    .values({ ...row, updated_at: row.created_at, completed_at: null })
    .returning('id')
    .executeTakeFirstOrThrow()

/** Stores one item of an order. */
export const insertItem = (db: Db, row: Insertable<OrderItemsTable>) =>
  db.insertInto('order_items').values(row).returning('id').executeTakeFirstOrThrow()

/** One order of the account. */
export const findOrder = (db: Db, accountId: number, orderId: number) =>
  db.selectFrom('orders').selectAll().where('account_id', '=', accountId).where('id', '=', orderId).executeTakeFirst()

/** The order by id alone: only for the job that processes it. */
export const findOrderForJob = (db: Db, orderId: number) =>
  db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst()

/** The account's orders that are not completed (nor cancelled), oldest first. */
export const listOpenOrders = (db: Db, accountId: number) =>
  db
    .selectFrom('orders')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', 'not in', ['completed', 'cancelled'])
    .orderBy('id')
    .execute()

/** The items of the account's orders `orderIds`, by id. */
export const itemsOf = async (db: Db, accountId: number, orderIds: number[]): Promise<OrderItem[]> => {
  if (orderIds.length === 0) return []
  const rows = await db
    .selectFrom('order_items')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('order_id', 'in', orderIds)
    .orderBy('id')
    .execute()
  return rows.map(decodeOrderItem)
}

/** The account's newest item of `type` (in `status`, when given). */
export const latestItem = async (db: Db, accountId: number, type: OrderItemType, status?: OrderItemStatus) => {
  let q = db.selectFrom('order_items').selectAll().where('account_id', '=', accountId).where('type', '=', type)
  if (status) q = q.where('status', '=', status)
  const row = await q.orderBy('id', 'desc').limit(1).executeTakeFirst()
  return row && decodeOrderItem(row)
}

/** Sets the status of an order (the completion time with `completed`). */
export const setOrderStatus = (db: Db, orderId: number, status: OrderStatus, now: string) =>
  db
    .updateTable('orders')
    .set({ status, updated_at: now, ...(status === 'completed' ? { completed_at: now } : {}) })
    .where('id', '=', orderId)
    .execute()

/** Records the outcome or a correction of one order item. */
export const updateItem = (
  db: Db,
  itemId: number,
  changes: { status: OrderItemStatus; errors: string; result?: string | null; details?: string; now: string },
) =>
  db
    .updateTable('order_items')
    .set({
      status: changes.status,
      errors: changes.errors,
      ...(changes.result !== undefined ? { result: changes.result } : {}),
      ...(changes.details !== undefined ? { details: changes.details } : {}),
      updated_at: changes.now,
    })
    .where('id', '=', itemId)
    .execute()

/** The account's items not done (nor cancelled) with the given type and name: to refuse a double order. */
export const findPendingByName = (db: Db, accountId: number, type: string, name: string) =>
  db
    .selectFrom('order_items')
    .select(['id', 'order_id', 'account_id'])
    .where('account_id', '=', accountId)
    .where('type', '=', type as OrderItemsTable['type'])
    .where('name', '=', name)
    .where('status', 'not in', ['done', 'cancelled'])
    .execute()

/** The operator's filter of orders: a status, an account. */
export interface AdminOrderFilter {
  status?: OrderStatus
  accountId?: number
}

const adminOrders = (db: Db, filter: AdminOrderFilter) => {
  let q = db.selectFrom('orders')
  if (filter.status) q = q.where('status', '=', filter.status)
  if (filter.accountId !== undefined) q = q.where('account_id', '=', filter.accountId)
  return q
}

/** Orders of every account, newest first (the operator's list). */
export const adminListOrders = (db: Db, filter: AdminOrderFilter, limit: number, offset: number) =>
  adminOrders(db, filter).selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute()

export const adminCountOrders = async (db: Db, filter: AdminOrderFilter): Promise<number> =>
  Number(
    (
      await adminOrders(db, filter)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

/** Cancels the items of an order not delivered yet. */
export const cancelOpenItems = (db: Db, orderId: number, now: string) =>
  db
    .updateTable('order_items')
    .set({ status: 'cancelled', updated_at: now })
    .where('order_id', '=', orderId)
    .where('status', 'in', ['pending', 'error'])
    .execute()

/** The account id of a customer number (the operator names accounts by it). */
export const accountIdOf = async (db: Db, customerNumber: number): Promise<number | undefined> =>
  (await db.selectFrom('accounts').select('id').where('customer_number', '=', customerNumber).executeTakeFirst())?.id
