import { Type } from 'typebox'
import { Nullable } from '../../../lib/nullable.js'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { errors } from '../../../errors.js'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import { Envelope, ok } from '../../../http/schemas.js'
import { ContactProfileIds } from '../domains.schemas.js'

const AvailabilityResult = Type.Object({
  domain: Type.String(),
  status: Type.String({
    description:
      '`available`, `unavailable` (registered already), `transfer` (registered elsewhere, can be transferred) or `invalid`',
  }),
  is_premium: Type.Boolean(),
  premium_price: Type.Union([
    Type.Object({
      currency: Type.String(),
      register: Type.Number({ description: 'Excluding VAT' }),
      renew: Type.Number({ description: 'Excluding VAT' }),
    }),
    Type.Null(),
  ]),
})

const OrderBody = Type.Object({
  domain: Type.String({ maxLength: 255 }),
  type: Type.Optional(
    Type.Union([Type.Literal('register'), Type.Literal('transfer')], { description: 'Default `register`' }),
  ),
  transfer_code: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  accept_premium_price: Type.Optional(
    Nullable(
      Type.Number({
        minimum: 0,
        description: 'For a premium name: the premium register price the availability check reported',
      }),
    ),
  ),
  nameserver: Type.Optional(
    Nullable(
      Type.String({ maxLength: 64, description: "Nameserver profile alias; default: the account's default profile" }),
    ),
  ),
  dns_template_id: Type.Optional(
    Nullable(Type.Integer({ minimum: 0, description: 'Fills the new zone from this template' })),
  ),
  profile: Type.Optional(
    ContactProfileIds("Contact profile ids; a role left out takes the account's default profile for it"),
  ),
  period: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'Years (register only); default 1' })),
})

/** Availability checks and domain orders. */
export const domainOrdersRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const perMinute = app.ctx.config.rateLimit.availabilityPerMinute
  const availabilityLimit = {
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (req: { principal: { accountId: number } | null; ip: string }) =>
      req.principal ? `availability:${req.principal.accountId}` : `availability-ip:${req.ip}`,
  }

  app.get(
    '/domains/availability',
    {
      config: { area: 'domains', rateLimit: availabilityLimit },
      schema: {
        operationId: 'checkDomainAvailabilityWithoutDomain',
        tags: ['Domain availability'],
        summary: 'Check availability without a domain',
        description: 'Always 400 `No domain set`: the domain belongs in the path.',
        response: { 200: Envelope(AvailabilityResult) },
      },
    },
    async () => {
      throw errors.noDomainSet()
    },
  )

  app.get(
    '/domains/availability/:domain',
    {
      config: { area: 'domains', fixture: 'availability', rateLimit: availabilityLimit },
      schema: {
        operationId: 'checkDomainAvailability',
        tags: ['Domain availability'],
        summary: 'Check whether a domain can be registered',
        description:
          `Use \`is_premium\` and \`premium_price\` to see a premium price before ordering. At most ${perMinute} checks per minute per account ` +
          '(429 `Rate limit exceeded`). 400 `No domain set`; 400 `Your domain request contains an empty extension`.',
        params: Type.Object({ domain: Type.String({ maxLength: 255 }) }),
        response: {
          200: Envelope(AvailabilityResult, {
            domain: 'cloud.shop',
            status: 'available',
            is_premium: true,
            premium_price: { currency: 'EUR', register: 2500, renew: 29.99 },
          }),
        },
      },
    },
    async (req) => ok(await app.services.domainOrders.availability(req.params.domain)),
  )

  app.post(
    '/domains/order',
    {
      config: { area: 'order', fixture: 'domainOrder', idempotent: true },
      schema: {
        operationId: 'orderDomain',
        tags: ['Domains'],
        summary: 'Order a domain (register or transfer)',
        description:
          'Checks the order, charges it and answers `order_id`; the domain is provisioned asynchronously. A premium name needs ' +
          '`accept_premium_price` equal to its premium register price (400 otherwise). A transfer with a wrong `transfer_code` leaves ' +
          'the order open with `status: error` and error code `transfer_code` on the service; correct it with `PUT /orders/{order_id}`. ' +
          'Send an `Idempotency-Key` header to make a retry safe. `?test=1`: checks the order and answers `order_id` 0 without ordering or charging.',
        querystring: DryRunQuery,
        body: OrderBody,
        response: { 200: Envelope(Type.Object({ order_id: Type.Integer() }), { order_id: 1201 }) },
      },
    },
    async (req) => {
      const { orderId } = await app.services.domainOrders.order(req.caller.accountId, req.body, dry(req))
      return ok({ order_id: orderId })
    },
  )
}
