import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { errors } from '../../errors.js'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { errorsFor } from '../../http/error-responses.js'
import { OkMessage, ok, okMessage } from '../../http/schemas.js'
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveryDetail,
  DeliveryList,
  DeliveryParams,
  RotatedSecret,
  UpdateWebhookBody,
  WebhookDetail,
  WebhookList,
  WebhookParams,
} from './webhooks.schemas.js'

const tags = ['Webhooks']
const PERMISSIONS_NOTE =
  'The endpoint belongs to the caller and receives only the events the caller may read when they happen (checked ' +
  'again before each attempt): all for the main user; for a sub-user those of its permission areas (each event of ' +
  'the `webhooks` section names its area; `ticket.replied` only for tickets the sub-user opened). An event the ' +
  'caller may not read answers 400 `Invalid events: <event> needs the <area> permission`; `*` is every event the ' +
  'caller may read.'
const notFound = { 404: [errors.webhookNotFound()] }
const urlProblems = [
  errors.invalidWebhookUrl('use https://'),
  errors.invalidWebhookUrl('the host is not a public address'),
  errors.invalidWebhookUrl('credentials in the URL are not allowed'),
  errors.invalidWebhookUrl('not an absolute URL'),
]

const eventNotPermitted = errors.webhookEventNotPermitted('invoice.paid', 'account-invoices')

/** Webhook endpoints of the account: events POSTed to the customer's URLs, signed (Standard Webhooks). */
export const webhooksRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/account/webhooks',
    {
      config: { area: 'account-api' },
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: 'List webhook endpoints',
        response: { 200: WebhookList, ...errorsFor('account-api', {}) },
      },
    },
    async (req) => ok({ webhooks: await app.services.webhooks.list(req.caller.accountId) }),
  )

  app.post(
    '/account/webhooks',
    {
      config: { area: 'account-api' },
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Create a webhook endpoint',
        description:
          'Events of the account are POSTed to `url` as they happen, signed with the secret in this answer (shown ' +
          'only here) as the Standard Webhooks specification describes: verify them with its `standardwebhooks` ' +
          'libraries. `events` lists the names to send, or `*` for all. Only `https://` URLs of public addresses ' +
          'unless the operator allows others; a limited number of endpoints per account. ' +
          PERMISSIONS_NOTE,
        querystring: DryRunQuery,
        body: CreateWebhookBody,
        response: {
          200: CreatedWebhook,
          ...errorsFor('account-api', { 400: [...urlProblems, eventNotPermitted, errors.tooManyWebhooks(20)] }),
        },
      },
    },
    async (req) => ok(await app.services.webhooks.create(req.caller, req.body, dry(req)), 'Webhook created'),
  )

  app.get(
    '/account/webhooks/:id',
    {
      config: { area: 'account-api', fixture: 'webhook' },
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'Get a webhook endpoint',
        params: WebhookParams,
        response: { 200: WebhookDetail, ...errorsFor('account-api', notFound) },
      },
    },
    async (req) => ok(await app.services.webhooks.get(req.caller.accountId, req.params.id)),
  )

  app.put(
    '/account/webhooks/:id',
    {
      config: { area: 'account-api', fixture: 'webhook' },
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Update a webhook endpoint',
        description:
          'Changes the fields given. `enabled: true` turns on an endpoint hostapi disabled after its deliveries ' +
          'kept failing. Setting `url` or `events` makes the caller the owner: the events listed, or kept, must be ' +
          'ones the caller may read. ' +
          PERMISSIONS_NOTE,
        params: WebhookParams,
        querystring: DryRunQuery,
        body: UpdateWebhookBody,
        response: {
          200: WebhookDetail,
          ...errorsFor('account-api', { ...notFound, 400: [...urlProblems, eventNotPermitted] }),
        },
      },
    },
    async (req) =>
      ok(await app.services.webhooks.update(req.caller, req.params.id, req.body, dry(req)), 'Webhook updated'),
  )

  app.delete(
    '/account/webhooks/:id',
    {
      config: { area: 'account-api', fixture: 'webhook' },
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook endpoint',
        description: 'Its pending deliveries are dropped.',
        params: WebhookParams,
        querystring: DryRunQuery,
        response: { 200: OkMessage, ...errorsFor('account-api', notFound) },
      },
    },
    async (req) => {
      await app.services.webhooks.remove(req.caller.accountId, req.params.id, dry(req))
      return okMessage('Webhook deleted')
    },
  )

  app.post(
    '/account/webhooks/:id/rotate-secret',
    {
      config: { area: 'account-api', fixture: 'webhook' },
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: "Rotate a webhook endpoint's secret",
        description:
          'A new secret, shown only in this answer. For 24 hours the old one signs beside it (two `v1,` ' +
          'signatures in `webhook-signature`), so receivers can switch without missing an event.',
        params: WebhookParams,
        querystring: DryRunQuery,
        response: { 200: RotatedSecret, ...errorsFor('account-api', notFound) },
      },
    },
    async (req) =>
      ok(await app.services.webhooks.rotateSecret(req.caller.accountId, req.params.id, dry(req)), 'Secret rotated'),
  )

  app.post(
    '/account/webhooks/:id/test',
    {
      config: { area: 'account-api', fixture: 'webhook' },
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send a test event',
        description: 'Queues a `webhook.test` event to this endpoint alone; the answer is its delivery.',
        params: WebhookParams,
        querystring: DryRunQuery,
        response: { 200: DeliveryDetail, ...errorsFor('account-api', notFound) },
      },
    },
    async (req) => ok(await app.services.webhooks.sendTest(req.caller.accountId, req.params.id, dry(req))),
  )

  app.get(
    '/account/webhooks/:id/deliveries',
    {
      config: { area: 'account-api', fixture: 'webhook' },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: "List a webhook endpoint's recent deliveries",
        description:
          'The 50 most recent, newest first: status, attempts, the last answer and its duration, the next attempt.',
        params: WebhookParams,
        response: { 200: DeliveryList, ...errorsFor('account-api', notFound) },
      },
    },
    async (req) => ok({ deliveries: await app.services.webhooks.deliveries(req.caller.accountId, req.params.id) }),
  )

  app.post(
    '/account/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      config: { area: 'account-api', fixture: 'webhookDelivery' },
      schema: {
        operationId: 'redeliverWebhook',
        tags,
        summary: 'Redeliver an event',
        description: "Sends the delivery's event again, with the same `webhook-id`, as a new delivery.",
        params: DeliveryParams,
        querystring: DryRunQuery,
        response: {
          200: DeliveryDetail,
          ...errorsFor('account-api', { 404: [errors.webhookNotFound(), errors.webhookDeliveryNotFound()] }),
        },
      },
    },
    async (req) =>
      ok(
        await app.services.webhooks.redeliver(req.caller.accountId, req.params.id, req.params.delivery_id, dry(req)),
        'Delivery queued',
      ),
  )
}
