import { Type } from 'typebox'
import { MAX_ID } from '../../db/ids.js'
import { Envelope, PageQuery, Pagination } from '../../http/schemas.js'
import { EVENT_TYPES } from './webhook-events.js'

const EventName = Type.Union([...EVENT_TYPES, '*'].map((e) => Type.Literal(e)))

const webhookFields = {
  id: Type.Integer(),
  url: Type.String(),
  description: Type.String(),
  events: Type.Array(Type.String(), { description: 'Event names, or `*` for every event' }),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why hostapi disabled the endpoint after its deliveries kept failing; null otherwise',
  }),
  created_at: Type.String(),
  updated_at: Type.String(),
}

const webhookExample = {
  id: 12,
  url: 'https://hooks.example.nl/hostapi',
  description: 'Provisioning',
  events: ['domain.order.completed', 'vps.task.completed'],
  enabled: true,
  disabled_reason: null,
  created_at: '2026-01-05T10:00:00.000Z',
  updated_at: '2026-01-05T10:00:00.000Z',
}
const secretExample = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4ZBXq5Rq1Tk='

const Secret = Type.String({
  description: 'The signing secret (`whsec_` and base64). Shown only in this answer: store it now.',
})

/** The endpoint id in the path. */
export const WebhookParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: MAX_ID, description: 'The id of a webhook endpoint' }),
})

/** The endpoint and delivery ids in the path. */
export const DeliveryParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: MAX_ID, description: 'The id of a webhook endpoint' }),
  delivery_id: Type.Integer({ minimum: 1, maximum: MAX_ID, description: 'The id of a delivery of this endpoint' }),
})

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Where events are POSTed: an `https://` URL whose host is a public address',
})
const Events = Type.Array(EventName, { minItems: 1, maxItems: EVENT_TYPES.length + 1, uniqueItems: true })
const Description = Type.String({ maxLength: 255 })

/** The body of `POST /account/webhooks`. */
export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
  },
  { examples: [{ url: webhookExample.url, events: webhookExample.events, description: 'Provisioning' }] },
)

/** The body of `PUT /account/webhooks/{id}`: the fields to change. */
export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
  },
  { examples: [{ events: ['*'] }, { enabled: true }] },
)

/** One endpoint. */
export const WebhookDetail = Envelope(Type.Object(webhookFields), webhookExample)
/** A new endpoint, with its secret. */
export const CreatedWebhook = Envelope(Type.Object({ ...webhookFields, secret: Secret }), {
  ...webhookExample,
  secret: secretExample,
})
/** Every endpoint of the account. */
export const WebhookList = Envelope(Type.Object({ webhooks: Type.Array(Type.Object(webhookFields)) }), {
  webhooks: [webhookExample],
})
/** The new secret after a rotation. */
export const RotatedSecret = Envelope(Type.Object({ secret: Secret }), { secret: secretExample })

const deliveryFields = {
  id: Type.Integer(),
  event_id: Type.String({ description: 'The `webhook-id` header: the same on every attempt' }),
  event_type: Type.String(),
  status: Type.Union(['pending', 'sending', 'succeeded', 'failed'].map((s) => Type.Literal(s))),
  attempts: Type.Integer(),
  response_status: Type.Union([Type.Integer(), Type.Null()], { description: "The last attempt's HTTP status" }),
  duration_ms: Type.Union([Type.Integer(), Type.Null()], {
    description: 'How long the last attempt took, when the receiver answered (null when it could not be reached)',
  }),
  last_error: Type.Union([Type.String(), Type.Null()], {
    description:
      "Why the last attempt failed: the receiver's status, `The receiver could not be reached` (no DNS answer, " +
      'connection refused or reset, TLS failure or timeout: one text, so the answer tells nothing of which hosts ' +
      'and ports exist), a refusal, or why it was not sent',
  }),
  last_attempt_at: Type.Union([Type.String(), Type.Null()]),
  next_attempt_at: Type.Union([Type.String(), Type.Null()], { description: 'When a pending delivery is tried next' }),
  created_at: Type.String(),
}

const deliveryExample = {
  id: 311,
  event_id: 'msg_2Wq0bRk1mN3d5xYzA8cVt4Lp',
  event_type: 'vps.task.completed',
  status: 'pending',
  attempts: 1,
  response_status: 503,
  duration_ms: 84,
  last_error: 'The receiver answered 503',
  last_attempt_at: '2026-01-05T10:00:00.000Z',
  next_attempt_at: '2026-01-05T10:00:05.000Z',
  created_at: '2026-01-05T10:00:00.000Z',
}

/** One delivery. */
export const DeliveryDetail = Envelope(Type.Object(deliveryFields), deliveryExample)
/** The recent deliveries of an endpoint. */
export const DeliveryList = Envelope(Type.Object({ deliveries: Type.Array(Type.Object(deliveryFields)) }), {
  deliveries: [deliveryExample],
})

const adminDeliveryFields = {
  ...deliveryFields,
  account_id: Type.Integer(),
  webhook_id: Type.Integer({ description: 'The endpoint' }),
  error_detail: Type.Union([Type.String(), Type.Null()], {
    description: 'The last failure as it happened (address, socket error), which the customer does not see',
  }),
}
const adminDeliveryExample = {
  ...deliveryExample,
  account_id: 7,
  webhook_id: 12,
  error_detail: 'The receiver answered 503',
}

/** `GET /webhooks/deliveries` of the admin API: filters and paging. */
export const AdminDeliveriesQuery = Type.Object({
  page: PageQuery.page,
  limit: PageQuery.limit,
  status: Type.Optional(Type.Union(['pending', 'sending', 'succeeded', 'failed'].map((s) => Type.Literal(s)))),
  account: Type.Optional(Type.Integer({ minimum: 1, description: 'Customer number' })),
})
/** The delivery id in an admin path. */
export const AdminDeliveryParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: MAX_ID }) })
/** Deliveries of every account. */
export const AdminDeliveryList = Envelope(
  Type.Object({ deliveries: Type.Array(Type.Object(adminDeliveryFields)), pagination: Pagination }),
  { deliveries: [adminDeliveryExample], pagination: { page: 1, limit: 25, total: 1, total_pages: 1 } },
)
/** One delivery with its account and endpoint. */
export const AdminDeliveryDetail = Envelope(Type.Object(adminDeliveryFields), adminDeliveryExample)
/** One delivery as it went out: where, what, signed how. */
export const AdminDeliveryFull = Envelope(
  Type.Object({
    ...adminDeliveryFields,
    url: Type.String({ description: "The endpoint's URL" }),
    payload: Type.Unknown({ description: 'The JSON body sent: `{type, timestamp, data}`' }),
    request_headers: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
      description:
        '`webhook-id`, `webhook-timestamp` and `webhook-signature` of the last attempt (signed with the secrets that ' +
        'signed then, unless the secret was rotated since); null before the first attempt',
    }),
  }),
  {
    ...adminDeliveryExample,
    url: 'https://hooks.example.com/hostapi',
    payload: { type: 'vps.task.completed', timestamp: '2026-01-05T10:00:00.000Z', data: { account: 100001 } },
    request_headers: {
      'webhook-id': 'msg_2Wq0bRk1mN3d5xYzA8cVt4Lp',
      'webhook-timestamp': '1767607200',
      'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    },
  },
)
/** The body of the sandbox's flush. */
export const FlushBody = Type.Object({
  all: Type.Optional(
    Type.Boolean({ description: 'Also pending deliveries whose next attempt is not due yet (default false)' }),
  ),
})
/** How many attempts the flush ran. */
export const FlushReply = Envelope(Type.Object({ attempts: Type.Integer() }), { attempts: 3 })
