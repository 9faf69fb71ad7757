import { Type } from 'typebox'
import { Envelope } from '../../http/schemas.js'
import { Time } from './admin.schemas.js'

/** Request and response schemas of the operator's side of the areas: catalogue, names, support, affiliate, billing. */

const Euro = (description: string) =>
  Type.Number({ minimum: 0, maximum: 1_000_000, description: `${description}, EUR excluding VAT (two decimals)` })

export const ExtensionParams = Type.Object({
  extension: Type.String({ minLength: 1, maxLength: 63, description: '`com` or `.com`' }),
})
export const ExtensionBody = Type.Object(
  {
    register_price: Euro('Register price per year'),
    renew_price: Euro('Renew price per year'),
    transfer_price: Euro('Transfer price'),
    min_period: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    max_period: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    supports_dnssec: Type.Optional(Type.Boolean()),
    supports_privacy: Type.Optional(Type.Boolean()),
    requires_auth_code: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, examples: [{ register_price: 9.99, renew_price: 12.99, transfer_price: 9.99 }] },
)
export const ExtensionReply = Envelope(
  Type.Object({
    extension: Type.String(),
    register_price: Type.String(),
    renew_price: Type.String(),
    transfer_price: Type.String(),
    min_period: Type.Integer(),
    max_period: Type.Integer(),
    supports_dnssec: Type.Boolean(),
    supports_privacy: Type.Boolean(),
    requires_auth_code: Type.Boolean(),
  }),
  {
    extension: 'com',
    register_price: '9.99',
    renew_price: '12.99',
    transfer_price: '9.99',
    min_period: 1,
    max_period: 10,
    supports_dnssec: true,
    supports_privacy: true,
    requires_auth_code: true,
  },
)

export const PremiumParams = Type.Object({
  name: Type.String({ minLength: 3, maxLength: 253, description: 'The domain name' }),
})
export const PremiumBody = Type.Object(
  { register_price: Euro('Register price'), renew_price: Euro('Renew price per year') },
  { additionalProperties: false, examples: [{ register_price: 2500, renew_price: 29.99 }] },
)
const Premium = Type.Object({ name: Type.String(), register_price: Type.Number(), renew_price: Type.Number() })
export const PremiumReply = Envelope(Premium, { name: 'cloud.shop', register_price: 2500, renew_price: 29.99 })
export const PremiumListReply = Envelope(Type.Object({ premium_names: Type.Array(Premium) }), {
  premium_names: [{ name: 'cloud.shop', register_price: 2500, renew_price: 29.99 }],
})

export const TicketNumberParams = Type.Object({ ticket_number: Type.Integer({ minimum: 1 }) })
export const SupportReplyBody = Type.Object(
  {
    message: Type.String({
      minLength: 1,
      maxLength: 100_000,
      description: 'HTML or text; sanitised like customer messages',
    }),
    author: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Shown as the author (default: Support)' }),
    ),
    close: Type.Optional(Type.Boolean({ description: 'Close the ticket with this answer' })),
  },
  { additionalProperties: false },
)

export const CommissionParams = Type.Object({
  customer_number: Type.Integer({ minimum: 1 }),
  id: Type.Integer({ minimum: 1 }),
})
export const CommissionBody = Type.Object(
  {
    order_nr: Type.Integer({ minimum: 1 }),
    sale_amount: Euro('The order amount'),
    commission_amount: Euro('The commission'),
    sub_id: Type.Optional(Type.String({ maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
)
export const RejectBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500 }) },
  { additionalProperties: false },
)
export const PayoutBody = Type.Object(
  {
    reference: Type.String({ minLength: 1, maxLength: 100, description: 'The bank transfer reference' }),
    invoice_nr: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'The invoice the payment settles, shown to the affiliate',
      }),
    ),
  },
  { additionalProperties: false },
)

export const InvoiceBody = Type.Object(
  {
    lines: Type.Array(
      Type.Object(
        {
          description: Type.String({ minLength: 1, maxLength: 300 }),
          amount: Type.Number({
            minimum: -1_000_000,
            maximum: 1_000_000,
            description: 'Line total, EUR excluding VAT',
          }),
          quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  {
    additionalProperties: false,
    examples: [{ lines: [{ description: 'Consultancy, 2 hours', amount: 150, quantity: 2 }] }],
  },
)
export const InvoiceNrParams = Type.Object({
  customer_number: Type.Integer({ minimum: 1 }),
  invoice_nr: Type.String({ minLength: 1, maxLength: 64 }),
})

export const ReservedBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 300 })) },
  { additionalProperties: false },
)
const Reserved = Type.Object({ name: Type.String(), reason: Type.String(), created_at: Time() })
const reservedExample = { name: 'nic.nl', reason: 'Kept by the registry', created_at: '2026-11-22T16:00:00.000Z' }
export const ReservedReply = Envelope(Reserved, reservedExample)
export const ReservedListReply = Envelope(Type.Object({ reserved_names: Type.Array(Reserved) }), {
  reserved_names: [reservedExample],
})
