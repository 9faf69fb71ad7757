import { EVENT_AREAS, EVENT_TYPES, TEST_EVENT, type EventType } from './webhook-events.js'

const at = '2026-01-05T10:00:00.000Z'
const account = 100042

/** What each event means and an example of its `data` (the account's customer number is added as `account`). */
const EVENTS: Record<EventType | typeof TEST_EVENT, { summary: string; data: Record<string, unknown> }> = {
  'domain.order.completed': {
    summary: 'A domain of an order was registered or transferred',
    data: { order_id: 5012, cart_id: 8801, domain: 'example.nl', status: 'done', errors: [] },
  },
  'domain.order.failed': {
    summary: 'A domain of an order could not be registered or transferred; correct it with PUT /orders/{id}',
    data: {
      order_id: 5013,
      cart_id: 8802,
      domain: 'example.com',
      status: 'error',
      errors: [{ code: 'transfer_code', description: 'The transfer code is not correct' }],
    },
  },
  'domain.status.changed': {
    summary: "A domain's status changed (cancellation requested or withdrawn, or the domain ended)",
    data: { domain: 'example.nl', status: 'pending_cancellation', status_id: 2, renewal_date: '2026-06-01' },
  },
  'domain.expiring': {
    summary: 'A domain is renewed or ends in 30 days, and again at 7 days',
    data: { domain: 'example.nl', status: 'active', renewal_date: '2026-02-04', days: 30 },
  },
  'dns.zone.changed': {
    summary: "A domain's DNS records changed",
    data: { domain: 'example.nl' },
  },
  'vps.task.completed': {
    summary: 'A VPS task (power action, install, backup, restore) finished',
    data: {
      vps_id: 301,
      id: 9120,
      action: 'restart',
      status: 'done',
      progress: 100,
      created: '2026-01-05 10:00',
      error: null,
    },
  },
  'vps.task.failed': {
    summary: 'A VPS task failed',
    data: {
      vps_id: 301,
      id: 9121,
      action: 'restart',
      status: 'failed',
      progress: 100,
      created: '2026-01-05 10:00',
      error: 'Host unreachable',
    },
  },
  'vps.status.changed': {
    summary: "A VPS's status changed at the end of a task",
    data: { vps_id: 301, status: 'running' },
  },
  'certificate.issued': {
    summary: 'A certificate was issued (GET /certificates/{id} has it)',
    data: { id: 77, common_name: 'shop.example.nl', certificate_status: 'ACT', valid_until: '2027-01-05 10:00:00' },
  },
  'certificate.failed': {
    summary: 'A certificate request failed (validation did not pass in time, or the CA refused it)',
    data: { id: 78, common_name: 'shop.example.nl', certificate_status: 'ERR', status_message: 'Validation failed: …' },
  },
  'certificate.expiring': {
    summary: 'An issued certificate expires in 30 days, and again at 7 days',
    data: { id: 77, common_name: 'shop.example.nl', certificate_status: 'ACT', valid_until: '2026-02-04', days: 30 },
  },
  'invoice.issued': {
    summary: 'An invoice was issued',
    data: { id: 3101, invoice_nr: '2026-003101', invoice_date: '2026-01-05', total_price: 12.1, paid: false },
  },
  'invoice.paid': {
    summary: 'An invoice was paid',
    data: { id: 3101, invoice_nr: '2026-003101', invoice_date: '2026-01-05', total_price: 12.1, paid: true },
  },
  'ticket.replied': {
    summary: 'Support answered a ticket',
    data: { ticket_number: 482913, subject: 'Mail setup', author: 'Support', message: '<p>Done.</p>' },
  },
  [TEST_EVENT]: {
    summary: 'Sent by POST /account/webhooks/{id}/test to that endpoint alone',
    data: { webhook_id: 12 },
  },
}

/** The documented example of an event's `data` (without `account`): what a sandbox trigger sends without a resource. */
export const eventExample = (type: EventType): Record<string, unknown> => structuredClone(EVENTS[type].data)

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
})

const HEADERS = [
  header('webhook-id', 'The event id (`msg_…`): the same on every attempt, so receivers drop repeats', 'msg_2Wq0bRk1'),
  header('webhook-timestamp', 'Seconds since the epoch when this attempt was sent', '1767607200'),
  header(
    'webhook-signature',
    '`v1,<base64 HMAC-SHA256 of "id.timestamp.body" with the secret>`, space separated: two during the 24 hours ' +
      'after a rotation. Verify with a Standard Webhooks library (npm `standardwebhooks`).',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
]

// The event's body: its data holds at least the fields of its example.
const eventSchema = (type: string, example: Record<string, unknown>) => ({
  type: 'object',
  required: ['type', 'timestamp', 'data'],
  properties: {
    type: { type: 'string', const: type },
    timestamp: { type: 'string', format: 'date-time' },
    data: {
      type: 'object',
      description: "The resource as the API shows it, with the account's customer number as `account`",
      properties: { account: { type: 'integer' } },
      required: [...Object.keys(example), 'account'],
    },
  },
})

/**
 * The `webhooks` section of the OpenAPI 3.1 document: one POST per event as hostapi sends it to an endpoint,
 * with its headers and an example payload. A 2xx answer within 10 s acknowledges it; anything else is retried.
 */
export function webhooksDocument(): Record<string, unknown> {
  return Object.fromEntries(
    [...EVENT_TYPES, TEST_EVENT].map((type) => {
      const { summary, data } = EVENTS[type]
      const area =
        type === TEST_EVENT
          ? "Sent whatever the permissions of the endpoint's owner."
          : `Sent to endpoints whose owner may read it: the main user, or a sub-user with the \`${EVENT_AREAS[type]}\` permission${type === 'ticket.replied' ? ' (for the tickets it opened)' : ''}.`
      return [
        type,
        {
          post: {
            summary,
            description: area,
            tags: ['Webhooks'],
            parameters: HEADERS,
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: eventSchema(type, data),
                  example: { type, timestamp: at, data: { ...data, account } },
                },
              },
            },
            responses: {
              '2XX': { description: 'Received; any other answer, a timeout or no connection is retried' },
            },
          },
        },
      ]
    }),
  )
}
