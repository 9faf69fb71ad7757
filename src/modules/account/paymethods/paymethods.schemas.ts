import { Type } from 'typebox'
import { MAX_ID } from '../../../db/ids.js'
import { Envelope } from '../../../http/schemas.js'

const defaultFields = {
  default: Type.String({
    description: 'Type of the default method; `bank_transfer` when no stored method is the default',
  }),
  default_paymethod_id: Type.String({
    description: 'Id of the default method from `paymethods`; empty for bank transfer',
  }),
}

/** The answer of `GET /account/paymethods/`. */
export const PaymethodList = Envelope(
  Type.Object({
    ...defaultFields,
    paymethods: Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.String({ description: '`creditcard`, `directdebit`, `paypal`' }),
        description: Type.String({ description: 'Masked account, such as `Credit card •••• 4242`' }),
        holder: Type.String(),
        expires: Type.Union([Type.String(), Type.Null()], { description: '`YYYY-MM` for cards' }),
        is_default: Type.Boolean(),
      }),
    ),
  }),
  {
    default: 'directdebit',
    default_paymethod_id: '12',
    paymethods: [
      {
        id: '11',
        type: 'creditcard',
        description: 'Credit card •••• 4242',
        holder: 'J. Jansen',
        expires: '2028-09',
        is_default: false,
      },
      {
        id: '12',
        type: 'directdebit',
        description: 'Direct debit NL91 •••• 4300',
        holder: 'Jansen Hosting B.V.',
        expires: null,
        is_default: true,
      },
    ],
  },
)

/** The answer of `PUT /account/paymethods/`: the spec's default payment method object. */
export const DefaultPaymethod = Envelope(Type.Object(defaultFields), {
  default: 'bank_transfer',
  default_paymethod_id: '',
})

/** The body of `PUT /account/paymethods/`. */
export const SetDefaultPaymethodBody = Type.Object(
  {
    default_paymethod_id: Type.Optional(
      Type.Union([Type.String({ maxLength: 32 }), Type.Integer({ minimum: 1, maximum: MAX_ID })], {
        description: 'An id from the list of payment methods',
      }),
    ),
    paymethod: Type.Optional(
      Type.Union([Type.Literal('bank_transfer')], { description: '`bank_transfer` to pay invoices by bank transfer' }),
    ),
  },
  {
    description: 'Either `default_paymethod_id` or `paymethod: "bank_transfer"`.',
    examples: [{ default_paymethod_id: '12' }, { paymethod: 'bank_transfer' }],
  },
)
