import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { present } from '../../lib/invariant.js'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, ok } from '../../http/schemas.js'
import { FixOrderBody, OrderDetail, OrderIdParams, OrderList } from './orders.schemas.js'
import { orderTime, type OrderView } from './orders.service.js'
import { errorsFor } from '../../http/error-responses.js'
import { errors } from '../../errors.js'

const cents = (n: number) => Math.round(n) / 100

const templateOf = (type: string, details: unknown) => {
  if (type !== 'domain') return {}
  const hasTemplate = typeof details === 'object' && details !== null && 'dns_template_id' in details
  const id = hasTemplate ? details.dns_template_id : null
  return { dns_template_id: typeof id === 'number' ? id : 0 }
}

const openOrder = ({ order, items }: OrderView) => ({
  order_id: order.id,
  status: order.status,
  services: items.map((i) => ({
    cart_id: i.id,
    type: i.type,
    name: i.name,
    ...templateOf(i.type, i.details),
    errors: i.errors,
  })),
})

const orderDetail = ({ order, items }: OrderView) => ({
  order_id: order.id,
  status: order.status,
  total_price: cents(order.total_cents),
  created: present(orderTime(order.created_at), `created_at of order ${order.id}`),
  completed: orderTime(order.completed_at),
  services: items.map((i) => ({
    cart_id: i.id,
    type: i.type,
    name: i.name,
    status: i.status,
    price: cents(i.price_cents),
    ...templateOf(i.type, i.details),
    errors: i.errors,
    result: i.result,
  })),
})

const detailExample = {
  order_id: 1201,
  status: 'error',
  total_price: 9.99,
  created: '2026-03-01 10:15:00',
  completed: null,
  services: [
    {
      cart_id: 3301,
      type: 'domain',
      name: 'example.nl',
      status: 'error',
      price: 9.99,
      dns_template_id: 0,
      errors: [{ code: 'transfer_code', description: 'The transfer code is not correct' }],
      result: null,
    },
  ],
}

/** Open orders of the account, one order, and the correction of an order item. */
export const ordersRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/orders',
    {
      config: { area: 'order' },
      schema: {
        operationId: 'listOrders',
        tags: ['Orders'],
        summary: 'List the open orders of the account',
        description:
          'Every order that is not completed, with its services; a service with a problem lists it in `errors`.',
        response: {
          200: Envelope(OrderList, {
            orders: [
              {
                order_id: 1201,
                status: 'error',
                services: [
                  {
                    cart_id: 3301,
                    type: 'domain',
                    name: 'example.nl',
                    dns_template_id: 0,
                    errors: [{ code: 'transfer_code', description: 'The transfer code is not correct' }],
                  },
                ],
              },
            ],
          }),
        },
      },
    },
    async (req) => {
      const orders = await app.services.orders.listOpen(req.caller.accountId)
      return ok({ orders: orders.map(openOrder) })
    },
  )

  app.get(
    '/orders/:order_id',
    {
      config: { area: 'order', fixture: 'order' },
      schema: {
        operationId: 'getOrder',
        tags: ['Orders'],
        summary: 'Get an order',
        description:
          "Any order of the account, completed ones included. Another account's order answers 404 `Order not found`.",
        params: OrderIdParams,
        response: {
          200: Envelope(OrderDetail, detailExample),
          ...errorsFor('order', { 404: [errors.orderNotFound()] }),
        },
      },
    },
    async (req) => ok(orderDetail(await app.services.orders.get(req.caller.accountId, req.params.order_id))),
  )

  app.put(
    '/orders/:order_id',
    {
      config: { area: 'order', fixture: 'order' },
      schema: {
        operationId: 'updateOrder',
        tags: ['Orders'],
        summary: 'Correct a service of an open order',
        description:
          'Fixes one service (`cart_id`) of an open order — for a domain: `profile`, `nameserver`, `dns_template_id`, ' +
          '`transfer_code` — and processes the order again. Returns the order. `?test=1` answers the corrected order without storing ' +
          'the correction or processing the order. Contact, nameserver profile and DNS template references are checked against ' +
          "the account: an unknown one and another account's answer alike (404 `Contact profile not found`, `Nameservers name not found`, " +
          '`DNS template not found`).',
        params: OrderIdParams,
        querystring: DryRunQuery,
        body: FixOrderBody,
        response: {
          200: Envelope(OrderDetail, {
            ...detailExample,
            status: 'open',
            services: [{ ...detailExample.services[0], status: 'pending', errors: [] }],
          }),
          ...errorsFor('order', { 404: [errors.orderNotFound()] }),
        },
      },
    },
    async (req) =>
      ok(
        orderDetail(
          await app.services.orderProcessing.fix(req.caller.accountId, req.params.order_id, req.body, dry(req)),
        ),
      ),
  )
}
