import { Type } from 'typebox'
import { Envelope, PageQuery, Pagination } from '../../../http/schemas.js'

/** `page`, `limit`, `search` of the invoice list. */
export const InvoiceListQuery = Type.Object(PageQuery, { additionalProperties: false })

/** The invoice number in the path. */
export const InvoiceParams = Type.Object({
  invoice_nr: Type.String({
    minLength: 1,
    maxLength: 32,
    description:
      'The invoice: its `invoice_nr` (`2026-000123`) or its integer `id` (`123`); ' +
      'the number without the hyphen (`2026000123`) is accepted too',
    examples: ['2026-000123', '123'],
  }),
})

const summaryFields = {
  id: Type.Integer({ description: 'Names the invoice in the path as well as `invoice_nr` does' }),
  invoice_date: Type.String({ description: '`YYYY-MM-DD`' }),
  invoice_nr: Type.String({ description: '`YYYY-NNNNNN`' }),
  total_price: Type.Number({ description: 'Total including VAT, EUR' }),
  paid: Type.Boolean(),
  payment_status: Type.String({ description: '`open`, `overdue`, `paid` or `cancelled`' }),
  payment_url: Type.Union([Type.String(), Type.Null()], { description: 'Where to pay online; null once paid' }),
}

const summaryExample = {
  id: 42,
  invoice_date: '2026-03-01',
  invoice_nr: '2026-000042',
  total_price: 12.09,
  paid: false,
  payment_status: 'open',
  payment_url: 'https://billing.example.com/pay/pay_8f3a1c',
}

/** The answer of `GET /account/invoices/`. */
export const InvoiceList = Envelope(
  Type.Object({ invoices: Type.Array(Type.Object(summaryFields)), pagination: Pagination }),
  { invoices: [summaryExample], pagination: { page: 1, limit: 25, total: 1, total_pages: 1 } },
)

/** The answer of `GET /account/invoices/{invoice_nr}`. */
export const InvoiceDetail = Envelope(
  Type.Object({
    ...summaryFields,
    due_date: Type.String({ description: '`YYYY-MM-DD`' }),
    order_id: Type.Union([Type.Integer(), Type.Null()]),
    currency: Type.String(),
    subtotal_price: Type.Number({ description: 'Total excluding VAT' }),
    vat_percentage: Type.Number(),
    vat_price: Type.Number(),
    lines: Type.Array(
      Type.Object({
        description: Type.String(),
        quantity: Type.Integer(),
        unit_price: Type.Number({ description: 'Excluding VAT' }),
        total_price: Type.Number({ description: 'Excluding VAT' }),
      }),
    ),
  }),
  {
    ...summaryExample,
    due_date: '2026-03-15',
    order_id: 1201,
    currency: 'EUR',
    subtotal_price: 9.99,
    vat_percentage: 21,
    vat_price: 2.1,
    lines: [
      { description: 'Domain registration example.nl (1 year)', quantity: 1, unit_price: 9.99, total_price: 9.99 },
    ],
  },
)

/** A binary PDF body. */
export const PdfFile = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' })
