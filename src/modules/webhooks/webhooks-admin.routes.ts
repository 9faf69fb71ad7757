import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { errors } from '../../errors.js'
import { adminErrors, errorsFor } from '../../http/error-responses.js'
import { ok } from '../../http/schemas.js'
import {
  AdminDeliveriesQuery,
  AdminDeliveryDetail,
  AdminDeliveryFull,
  AdminDeliveryList,
  AdminDeliveryParams,
  FlushBody,
  FlushReply,
} from './webhooks.schemas.js'

const tags = ['Webhooks']
const admin = { admin: true } as const

/** The operator's view of webhook deliveries: every account's, and a redelivery. */
export const webhooksAdminRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/webhooks/deliveries',
    {
      config: admin,
      schema: {
        operationId: 'adminListWebhookDeliveries',
        tags,
        summary: 'List webhook deliveries of every account, newest first',
        querystring: AdminDeliveriesQuery,
        response: { 200: AdminDeliveryList, ...adminErrors },
      },
    },
    async (req) => ok(await app.services.webhooks.adminDeliveries(req.query)),
  )

  app.get(
    '/webhooks/deliveries/:id',
    {
      config: admin,
      schema: {
        operationId: 'adminGetWebhookDelivery',
        tags,
        summary:
          'One webhook delivery as it went out: the URL, the body, the signed headers of its last attempt, and the answer',
        params: AdminDeliveryParams,
        response: {
          200: AdminDeliveryFull,
          ...adminErrors,
          ...errorsFor('', { 404: [errors.webhookDeliveryNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.webhooks.adminDelivery(req.params.id)),
  )

  app.post(
    '/webhooks/deliveries/:id/redeliver',
    {
      config: admin,
      schema: {
        operationId: 'adminRedeliverWebhook',
        tags,
        summary: "Send a delivery's event again, as a new delivery with fresh attempts",
        params: AdminDeliveryParams,
        response: { 200: AdminDeliveryDetail, ...adminErrors },
      },
    },
    async (req) => ok(await app.services.webhooks.adminRedeliver(req.params.id), 'Delivery queued'),
  )
}

/** The sandbox's flush of webhook deliveries; registered only in sandbox mode. */
export const webhooksSandboxRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/sandbox/webhooks/flush',
    {
      config: admin,
      schema: {
        operationId: 'sandboxFlushWebhooks',
        tags: ['Sandbox'],
        summary: 'Run the webhook deliveries due by the sandbox clock now, in this request',
        description:
          'Retries wait on the sandbox clock: move it (`POST /sandbox/clock`) and flush to run the next attempts ' +
          'at once, or flush with `all: true` to run every pending delivery now.',
        body: FlushBody,
        response: { 200: FlushReply, ...adminErrors },
      },
    },
    async (req) => ok({ attempts: await app.services.webhooks.flush(req.body.all === true) }),
  )
}
