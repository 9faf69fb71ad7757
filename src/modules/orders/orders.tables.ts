import type { Generated, Selectable } from 'kysely'

/** Orders of every area and their items (the specification's "services", identified by cart_id). */
export interface OrderTables {
  orders: OrdersTable
  order_items: OrderItemsTable
}

/** The states of an order. */
export type OrderStatus = 'open' | 'processing' | 'error' | 'completed' | 'cancelled'
/** The states of an order item. */
export type OrderItemStatus = 'pending' | 'done' | 'error' | 'cancelled'
/** What an order item provisions. */
export type OrderItemType = 'domain' | 'vps' | 'certificate' | 'hosting'

/** One order of an account. */
export interface OrdersTable {
  id: Generated<number>
  account_id: number
  status: OrderStatus
  total_cents: number
  created_at: string
  updated_at: string
  completed_at: string | null
}

/** One item of an order. */
export interface OrderItemsTable {
  /** The specification's `cart_id`. */
  id: Generated<number>
  order_id: number
  account_id: number
  type: OrderItemType
  /** Product name or domain name. */
  name: string
  /** JSON: what the area's processor needs to provision the item. */
  details: string
  price_cents: number
  status: OrderItemStatus
  /** JSON array of {code, description}; `[]` when the item has no error. */
  errors: string
  /** JSON: what provisioning produced (the domain, VPS or certificate id), or null. */
  result: string | null
  created_at: string
  updated_at: string
}

/** An order row. */
export type Order = Selectable<OrdersTable>
/** An order item row as stored (its JSON columns as text; orders.repository decodes them). */
export type OrderItemRow = Selectable<OrderItemsTable>

/** One error of an order item, as the specification shows it (`transfer_code`, …). */
export interface OrderItemError {
  code: string
  description: string
}
