import { Type } from 'typebox'
import { MAX_ID } from '../../db/ids.js'
import { Envelope, PageQuery, Pagination } from '../../http/schemas.js'

/** The numeric id in the path. */
export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: MAX_ID }) })
/** `page`, `limit`, `search` of the affiliate lists. */
export const AffiliateListQuery = Type.Object(PageQuery)

const commissionFields = {
  id: Type.Integer(),
  date: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
  order_nr: Type.Integer(),
  sub_id: Type.String({ description: 'Your sub-id from the referral link; may be empty' }),
  sale_amount: Type.Number(),
  commission_amount: Type.Number(),
  approved: Type.Integer({ description: 'Flag: 1 approved, 0 not (yet)' }),
  paidout: Type.Integer({ description: 'Flag: 1 paid out, 0 not' }),
  payment_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The affiliate payment that paid it; null until paid out',
  }),
}
const Commission = Type.Object(commissionFields)

const commissionExample = {
  id: 5012,
  date: '2026-02-14 10:31:07',
  order_nr: 88123,
  sub_id: 'blog',
  sale_amount: 59.88,
  commission_amount: 5.99,
  approved: 1,
  paidout: 0,
  payment_id: null,
}

/** The answer of `GET /affiliate/commissions/`. */
export const CommissionList = Envelope(Type.Object({ commissions: Type.Array(Commission), pagination: Pagination }), {
  commissions: [commissionExample],
  pagination: { page: 1, limit: 25, total: 1, total_pages: 1 },
})

/** The answer of `GET /affiliate/commissions/{id}`. */
export const CommissionDetail = Envelope(
  Type.Object({
    ...commissionFields,
    description: Type.String(),
    status: Type.String({ description: '`pending`, `approved`, `rejected` or `paid`' }),
    rejection_reason: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'Present when not approved: the reason, or null while pending',
      }),
    ),
  }),
  {
    ...commissionExample,
    approved: 0,
    description: 'VPS Medium, 12 months',
    status: 'rejected',
    rejection_reason: 'The order was refunded',
  },
)

const paymentFields = {
  id: Type.Integer(),
  date: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
  amount: Type.Number(),
  method: Type.String({ description: '`bank_transfer`' }),
  reference: Type.String(),
  status: Type.String(),
  invoice_nr: Type.Union([Type.String(), Type.Null()], {
    description: "The invoice this payment settles (the affiliate's or a self-billing one); null when none is named",
  }),
  commission_count: Type.Integer(),
}
const paymentExample = {
  id: 301,
  date: '2026-03-01 09:00:00',
  amount: 42.5,
  method: 'bank_transfer',
  reference: 'AFF-2026-03-100001',
  status: 'paid',
  invoice_nr: 'AFF-2026-0012',
  commission_count: 3,
}

/** The answer of `GET /affiliate/payments/`. */
export const PaymentList = Envelope(
  Type.Object({ payments: Type.Array(Type.Object(paymentFields)), pagination: Pagination }),
  { payments: [paymentExample], pagination: { page: 1, limit: 25, total: 1, total_pages: 1 } },
)

/** The answer of `GET /affiliate/payments/{id}`. */
export const PaymentDetail = Envelope(Type.Object({ ...paymentFields, commissions: Type.Array(Commission) }), {
  ...paymentExample,
  commission_count: 1,
  commissions: [{ ...commissionExample, paidout: 1, payment_id: 301 }],
})
