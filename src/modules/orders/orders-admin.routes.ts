import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { adminErrors } from '../../http/error-responses.js'
import { ok } from '../../http/schemas.js'
import { AdminOrderDetail, AdminOrderList, AdminOrderParams, AdminOrdersQuery } from './orders-admin.schemas.js'

const tags = ['Orders']
const admin = { admin: true } as const

/** The operator's orders of every account: list, show, and the repairs of a stranded one (retry, cancel). */
export const ordersAdminRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const svc = app.services.ordersAdmin

  app.get(
    '/orders',
    {
      config: admin,
      schema: {
        operationId: 'adminListOrders',
        tags,
        summary: 'List orders of every account, newest first',
        querystring: AdminOrdersQuery,
        response: { 200: AdminOrderList, ...adminErrors },
      },
    },
    async (req) => ok(await svc.list(req.query)),
  )

  app.get(
    '/orders/:id',
    {
      config: admin,
      schema: {
        operationId: 'adminGetOrder',
        tags,
        summary: 'Get an order with its items, invoices and processing jobs',
        params: AdminOrderParams,
        response: { 200: AdminOrderDetail, ...adminErrors },
      },
    },
    async (req) => ok(await svc.get(req.params.id)),
  )

  app.post(
    '/orders/:id/retry',
    {
      config: admin,
      schema: {
        operationId: 'adminRetryOrder',
        tags,
        summary: 'Queue the processing of an order again',
        description:
          'For an order left open (its process died before its job was queued, or its job failed): queues its ' +
          'processing once, and first makes its invoice when it has none. A completed or cancelled order answers 400.',
        params: AdminOrderParams,
        response: { 200: AdminOrderDetail, ...adminErrors },
      },
    },
    async (req) => ok(await svc.retry(req.params.id), 'Order queued'),
  )

  app.post(
    '/orders/:id/cancel',
    {
      config: admin,
      schema: {
        operationId: 'adminCancelOrder',
        tags,
        summary: 'Cancel an order and its undelivered items',
        description:
          'Cancels the items not delivered yet, which frees what they held (a domain name may be ordered again), and ' +
          'drops the queued processing. A completed order, or one whose processing runs now, answers 400.',
        params: AdminOrderParams,
        response: { 200: AdminOrderDetail, ...adminErrors },
      },
    },
    async (req) => ok(await svc.cancel(req.params.id), 'Order cancelled'),
  )
}
