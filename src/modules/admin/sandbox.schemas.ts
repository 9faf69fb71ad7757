import { Type } from 'typebox'
import { Envelope, documentedEnum } from '../../http/schemas.js'
import { WORK_KINDS } from '../../ops/faults.js'
import { FAULT_STATUSES } from '../../errors.js'
import { Time } from './admin.schemas.js'
import { SeedFileSchema } from './seed.schemas.js'
import { EVENT_TYPES } from '../webhooks/webhook-events.js'

/** Request and response schemas of the sandbox's admin routes: reset, clock, faults and the call journal. */

/** The body of a reset: a seed document (the seed file's format), loaded instead of the seed file or the demo data. */
export const ResetBody = Type.Union([SeedFileSchema, Type.Null()], {
  description:
    'A seed document in the format of HOSTAPI_SEED_FILE (as JSON), loaded instead of the seed file or the demo data; none: the configured seed',
  examples: [
    {
      accounts: [
        {
          name: 'Acme B.V.',
          email: 'owner@acme.example',
          keys: [{ key: 'sandbox-acme-main-key-000000000001', label: 'ci' }],
          domains: [
            {
              name: 'acme-example.nl',
              renewal_date: '2030-01-15',
              records: [{ type: 'A', name: '@', value: '192.0.2.10' }],
            },
          ],
        },
      ],
    },
  ],
})

export const ResetReply = Envelope(
  Type.Object({
    accounts: Type.Integer({ description: 'Accounts after the reset' }),
    seed: Type.String({
      description: '`document` (the seed in the body), `file` (HOSTAPI_SEED_FILE), `demo` or `empty`',
    }),
    demo_key: Type.Union([Type.String(), Type.Null()], { description: 'The demo key, when the demo data was seeded' }),
  }),
  { accounts: 1, seed: 'file', demo_key: null },
)

export const ClockBody = Type.Object(
  {
    advance: Type.Optional(
      Type.String({
        description: 'Move forward by a number and a unit: 30d, 12h, 15m, 45s (or back with a leading -)',
        examples: ['30d'],
      }),
    ),
    to: Type.Optional(Type.String({ description: 'Set the clock to this time (YYYY-MM-DD or ISO 8601)' })),
  },
  { additionalProperties: false },
)
export const ClockReply = Envelope(
  Type.Object({
    now: Time(),
    offset_seconds: Type.Number({ description: 'How far the sandbox clock is from real time' }),
    jobs_run: Type.Integer({ description: 'Jobs that became due and ran before this answer' }),
  }),
  { now: '2026-12-22T16:00:00.000Z', offset_seconds: 2592000, jobs_run: 1 },
)

/** The work kinds, each with what a fault does to it, as a Markdown list. */
const workList = Object.entries(WORK_KINDS)
  .map(([name, what]) => `- \`${name}\`: ${what}`)
  .join('\n')

export const FaultBody = Type.Object(
  {
    operation: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'An operationId of the customer API, e.g. `getDnsRecords` (set this or `work`)',
      }),
    ),
    work: documentedEnum(
      Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          description:
            'Asynchronous work to fail instead of a customer operation (set this or `operation`); `params`, ' +
            '`customer_number`, `count`, `probability` and `status_description` (the reason given) apply, the ' +
            'fields of answers (`status`, `latency_ms`, `key_prefix`, `retry_after`, `reset`) do not:\n' +
            workList,
        }),
      ),
      Object.keys(WORK_KINDS),
    ),
    status: Type.Optional(
      Type.Union(
        FAULT_STATUSES.map((s) => Type.Literal(s)),
        { description: 'Answer with this status; omitted = only delay' },
      ),
    ),
    status_description: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "The answer's text; for `work`, the reason the outside party gives",
      }),
    ),
    probability: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'Chance per matching call (default 1)' }),
    ),
    latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
    count: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Fire this many times, then stop (default: until deleted)' }),
    ),
    params: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 255 }), {
        maxProperties: 8,
        description: 'Only calls whose path parameters have these values, e.g. `{"domain": "example.nl"}`',
      }),
    ),
    customer_number: Type.Optional(Type.Integer({ minimum: 1, description: 'Only calls of this account' })),
    key_prefix: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Only calls made with this API key (its prefix)' }),
    ),
    retry_after: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 86_400, description: '`Retry-After` seconds (default 1 for a 429)' }),
    ),
    reset: Type.Optional(Type.Boolean({ description: 'Reset the connection instead of answering' })),
  },
  {
    additionalProperties: false,
    examples: [
      { operation: 'getDnsRecords', status: 503, count: 2, params: { domain: 'example.nl' } },
      {
        work: 'registry.register',
        count: 1,
        params: { domain: 'example.nl' },
        status_description: 'Registrant data incomplete',
      },
    ],
  },
)
const Fault = Type.Object({
  id: Type.Integer(),
  operation: Type.Union([Type.String(), Type.Null()], { description: 'The customer operation it answers, or null' }),
  work: Type.Union([Type.String(), Type.Null()], { description: 'The asynchronous work it fails, or null' }),
  status: Type.Union([Type.Integer(), Type.Null()]),
  status_description: Type.Union([Type.String(), Type.Null()]),
  probability: Type.Number(),
  latency_ms: Type.Integer(),
  remaining: Type.Union([Type.Integer(), Type.Null()], { description: 'Firings left; null = until deleted' }),
  fired: Type.Integer(),
  params: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
  customer_number: Type.Union([Type.Integer(), Type.Null()]),
  key_prefix: Type.Union([Type.String(), Type.Null()]),
  retry_after: Type.Union([Type.Integer(), Type.Null()]),
  reset: Type.Boolean(),
})
const faultExample = {
  id: 1,
  operation: 'getDnsRecords',
  work: null,
  status: 503,
  status_description: null,
  probability: 1,
  latency_ms: 0,
  remaining: 2,
  fired: 0,
  params: { domain: 'example.nl' },
  customer_number: null,
  key_prefix: null,
  retry_after: null,
  reset: false,
}
export const FaultReply = Envelope(Fault, faultExample)
export const FaultsReply = Envelope(Type.Object({ faults: Type.Array(Fault) }), { faults: [faultExample] })

export const JournalQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Only the last N calls' })),
  after: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'Only calls with an id over this one: a reader polling for new calls passes the last id it has (ids keep rising across a clear or reset)',
    }),
  ),
})
const JournalEntry = Type.Object({
  id: Type.Integer(),
  time: Time(),
  request_id: Type.String(),
  method: Type.String(),
  path: Type.String(),
  operation: Type.Union([Type.String(), Type.Null()]),
  key_prefix: Type.Union([Type.String(), Type.Null()]),
  body: Type.Unknown({ description: 'The request body (secret fields redacted)' }),
  request_headers: Type.Record(Type.String(), Type.String(), {
    description: 'The request headers (lower case; API-Key, Authorization and Cookie redacted)',
  }),
  status: Type.Integer(),
  response_headers: Type.Record(Type.String(), Type.String(), {
    description: 'The answer headers (lower case; Set-Cookie redacted)',
  }),
  response_body: Type.Unknown({
    description:
      'The answer body: JSON parsed with secret fields redacted, other text as is, binary as its size; cut to 4096 characters',
  }),
  response_truncated: Type.Boolean({ description: 'Whether response_body was cut (it is then text)' }),
  duration_ms: Type.Number({ description: 'From the request to the last byte of the answer, in milliseconds' }),
})
export const JournalReply = Envelope(
  Type.Object({
    entries: Type.Array(JournalEntry),
    clears: Type.Integer({
      description:
        'How many times the journal was emptied (a clear or a reset) since the process started: a reader that sees it change drops the calls it shows',
    }),
  }),
  {
    clears: 0,
    entries: [
      {
        id: 1,
        time: '2026-11-22T16:00:00.000Z',
        request_id: 'b3c1…',
        method: 'GET',
        path: '/api/v2/whoami',
        operation: 'whoami',
        key_prefix: 'Xk3v9QbZ',
        body: null,
        request_headers: { host: 'localhost:8443', 'api-key': '[redacted]', accept: 'application/json' },
        status: 200,
        response_headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': '89' },
        response_body: {
          status: 200,
          status_description: 'Request successful',
          data: { ip: '127.0.0.1', customer_number: 100001 },
        },
        response_truncated: false,
        duration_ms: 2.4,
      },
    ],
  },
)

export const TriggerEventBody = Type.Object(
  {
    type: Type.String({
      minLength: 1,
      maxLength: 100,
      description: `The event type: ${EVENT_TYPES.join(', ')}`,
    }),
    customer_number: Type.Optional(
      Type.Integer({ minimum: 1, description: 'The account; may be left out when there is only one' }),
    ),
    data: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), {
        maxProperties: 64,
        description:
          "Fields merged over the payload's `data` (top level; `account` is always the account's customer number)",
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ type: 'domain.status.changed', customer_number: 100001, data: { status: 'pending_cancellation' } }],
  },
)
export const TriggerEventReply = Envelope(
  Type.Object({
    id: Type.String({ description: 'The event id, sent as `webhook-id`' }),
    type: Type.String(),
    timestamp: Time(),
    customer_number: Type.Integer(),
    source: Type.Union([Type.Literal('resource'), Type.Literal('example')], {
      description:
        "`resource`: the view of the account's own resource that the real cause sends; `example`: the documented example (the account has none)",
    }),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'The `data` sent, with `account`' }),
    endpoints: Type.Integer({
      description:
        'Endpoints that receive it: enabled, subscribed to the type, and their owner may read it (0: nothing was recorded)',
    }),
  }),
  {
    id: 'msg_2Wq0bRk1x9Lm4Tq8ZpVd7cHs',
    type: 'domain.status.changed',
    timestamp: '2026-11-22T16:00:00.000Z',
    customer_number: 100001,
    source: 'resource',
    data: {
      domain: 'example.nl',
      status: 'pending_cancellation',
      status_id: 2,
      renewal_date: '2027-06-01',
      account: 100001,
    },
    endpoints: 1,
  },
)
