import { Type } from 'typebox'
import { MAX_ID } from '../../db/ids.js'
import { Envelope, PageQuery, Pagination } from '../../http/schemas.js'

const ORDER_STATUSES = ['open', 'processing', 'error', 'completed', 'cancelled'] as const

const orderFields = {
  id: Type.Integer(),
  account_id: Type.Integer(),
  status: Type.Union(ORDER_STATUSES.map((s) => Type.Literal(s))),
  total_cents: Type.Integer(),
  created: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
  updated: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
  completed: Type.Union([Type.String(), Type.Null()]),
}
const orderExample = {
  id: 1201,
  account_id: 7,
  status: 'open',
  total_cents: 999,
  created: '2026-03-01 10:15:00',
  updated: '2026-03-01 10:15:00',
  completed: null,
}

/** `GET /orders` of the admin API: filters and paging. */
export const AdminOrdersQuery = Type.Object({
  page: PageQuery.page,
  limit: PageQuery.limit,
  status: Type.Optional(Type.Union(ORDER_STATUSES.map((s) => Type.Literal(s)))),
  account: Type.Optional(Type.Integer({ minimum: 1, description: 'Customer number' })),
})
/** The order id in an admin path. */
export const AdminOrderParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: MAX_ID }) })
/** Orders of every account, newest first. */
export const AdminOrderList = Envelope(
  Type.Object({ orders: Type.Array(Type.Object(orderFields)), pagination: Pagination }),
  { orders: [orderExample], pagination: { page: 1, limit: 25, total: 1, total_pages: 1 } },
)
/** One order with its items, invoices and processing jobs. */
export const AdminOrderDetail = Envelope(
  Type.Object({
    ...orderFields,
    items: Type.Array(
      Type.Object({
        cart_id: Type.Integer(),
        type: Type.String(),
        name: Type.String(),
        status: Type.String({ description: '`pending`, `done`, `error` or `cancelled`' }),
        price_cents: Type.Integer(),
        errors: Type.Array(Type.Object({ code: Type.String(), description: Type.String() })),
      }),
    ),
    invoices: Type.Array(
      Type.Object({
        invoice_nr: Type.String(),
        total_price: Type.Number(),
        payment_status: Type.String(),
        payment_url: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
    jobs: Type.Array(
      Type.Object({
        id: Type.Integer(),
        status: Type.String(),
        attempts: Type.Integer(),
        max_attempts: Type.Integer(),
        run_at: Type.String(),
        last_error: Type.Union([Type.String(), Type.Null()]),
      }),
      { description: 'The jobs that processed or will process the order, oldest first' },
    ),
  }),
  {
    ...orderExample,
    items: [{ cart_id: 3301, type: 'domain', name: 'example.nl', status: 'pending', price_cents: 999, errors: [] }],
    invoices: [
      { invoice_nr: '2026-000042', total_price: 12.09, payment_status: 'open', payment_url: 'https://pay.example/p_1' },
    ],
    jobs: [
      { id: 88, status: 'queued', attempts: 0, max_attempts: 5, run_at: '2026-03-01T10:15:00.000Z', last_error: null },
    ],
  },
)
