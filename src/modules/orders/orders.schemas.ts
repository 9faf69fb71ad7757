import { Type } from 'typebox'

/** Schemas of the orders routes. */

/** The `{order_id}` of the order routes. */
export const OrderIdParams = Type.Object({
  order_id: Type.Integer({ minimum: 1, description: 'The order id' }),
})

const ServiceError = Type.Object({ code: Type.String(), description: Type.String() })

/** An order service as `GET /orders/` shows it (the specification's shape). */
export const OrderService = Type.Object({
  cart_id: Type.Integer(),
  type: Type.String({ description: '`domain`, `vps`, `certificate` or `hosting`' }),
  name: Type.String({ description: 'Product name or domain name' }),
  dns_template_id: Type.Optional(Type.Integer({ description: 'Domain services only; 0 when no template was chosen' })),
  errors: Type.Array(ServiceError, { description: 'Empty when the service has no error' }),
})

/** An open order as `GET /orders/` shows it. */
export const OpenOrder = Type.Object({
  order_id: Type.Integer(),
  status: Type.String({ description: '`open`, `processing` or `error`' }),
  services: Type.Array(OrderService),
})

/** `GET /orders/`. */
export const OrderList = Type.Object({ orders: Type.Array(OpenOrder) })

/** `GET /orders/{order_id}`: every order, with prices and what provisioning produced. */
export const OrderDetail = Type.Object({
  order_id: Type.Integer(),
  status: Type.String({ description: '`open`, `processing`, `error`, `completed` or `cancelled` (by the operator)' }),
  total_price: Type.Number({ description: 'EUR, excluding VAT' }),
  created: Type.String({ description: 'YYYY-MM-DD HH:MM:SS' }),
  completed: Type.Union([Type.String(), Type.Null()], { description: 'YYYY-MM-DD HH:MM:SS, or null while open' }),
  services: Type.Array(
    Type.Object({
      cart_id: Type.Integer(),
      type: Type.String(),
      name: Type.String(),
      status: Type.String({ description: '`pending`, `done`, `error` or `cancelled`' }),
      price: Type.Number({ description: 'EUR, excluding VAT' }),
      dns_template_id: Type.Optional(Type.Integer()),
      errors: Type.Array(ServiceError),
      result: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
        description: 'What provisioning produced (for example the domain), or null',
      }),
    }),
  ),
})

/** `PUT /orders/{order_id}`. */
export const FixOrderBody = Type.Object(
  {
    cart_id: Type.Integer({ minimum: 1, description: 'The service of the order to correct' }),
    domain: Type.Optional(
      Type.Object(
        {
          profile: Type.Optional(
            Type.Object({
              owner: Type.Optional(Type.Integer()),
              admin: Type.Optional(Type.Integer()),
              tech: Type.Optional(Type.Integer()),
              billing: Type.Optional(Type.Integer()),
            }),
          ),
          nameserver: Type.Optional(Type.String({ maxLength: 64 })),
          dns_template_id: Type.Optional(Type.Integer({ minimum: 0 })),
          transfer_code: Type.Optional(Type.String({ maxLength: 255 })),
        },
        { additionalProperties: false },
      ),
    ),
    hosting: Type.Optional(Type.Object({ domain: Type.Optional(Type.String({ maxLength: 253 })) })),
  },
  { additionalProperties: true },
)
