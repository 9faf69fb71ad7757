import { Type } from 'typebox'
import { Envelope, PageQuery, Pagination } from '../../http/schemas.js'

/** Request and response schemas of the admin API. */

/** A time in ISO 8601 UTC, as every admin reply gives it. */
export const Time = (description?: string) =>
  Type.String({ description: description ?? 'ISO 8601 UTC', examples: ['2026-11-22T16:00:00.000Z'] })
const NullableTime = (description?: string) => Type.Union([Time(description), Type.Null()])

export const CustomerNumberParams = Type.Object({
  customer_number: Type.Integer({ minimum: 1, description: 'The customer number' }),
})
export const KeyParams = Type.Object({
  customer_number: Type.Integer({ minimum: 1 }),
  key: Type.String({ minLength: 1, maxLength: 64, description: 'The key prefix (first 8 characters) or the key id' }),
})
export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

export const Account = Type.Object({
  customer_number: Type.Integer(),
  name: Type.String(),
  status: Type.String({ description: '`active` or `suspended`' }),
  created_at: Time(),
})

export const User = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String(),
  firstname: Type.String(),
  lastname: Type.String(),
  is_main_user: Type.Boolean(),
  permissions: Type.Record(Type.String(), Type.Boolean()),
  created_at: Time(),
})

export const ApiKey = Type.Object({
  id: Type.Integer(),
  prefix: Type.String({ description: 'The first 8 characters of the key' }),
  user_id: Type.Integer(),
  label: Type.String(),
  expires_at: NullableTime(),
  allowed_ips: Type.Array(Type.String(), { description: 'Addresses and CIDR ranges; empty = any address' }),
  last_used_at: NullableTime(),
  last_used_ip: Type.Union([Type.String(), Type.Null()]),
  revoked_at: NullableTime(),
  created_at: Time(),
})

const accountExample = {
  customer_number: 100001,
  name: 'Acme B.V.',
  status: 'active',
  created_at: '2026-11-22T16:00:00.000Z',
}
const keyExample = {
  id: 1,
  prefix: 'Xk3v9QbZ',
  user_id: 1,
  label: 'ci',
  expires_at: null,
  allowed_ips: ['203.0.113.0/24'],
  last_used_at: null,
  last_used_ip: null,
  revoked_at: null,
  created_at: '2026-11-22T16:00:00.000Z',
}
const userExample = {
  id: 1,
  username: 'owner@acme.test',
  email: 'owner@acme.test',
  firstname: 'Ann',
  lastname: 'Owner',
  is_main_user: true,
  permissions: { domains: true, vps: true },
  created_at: '2026-11-22T16:00:00.000Z',
}

export const AccountDetail = Type.Object({
  ...Account.properties,
  users: Type.Array(User),
  keys: Type.Array(ApiKey),
})

export const AccountsQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('suspended')])),
})
export const AccountsReply = Envelope(Type.Object({ accounts: Type.Array(Account), pagination: Pagination }), {
  accounts: [accountExample],
  pagination: { page: 1, limit: 25, total: 1, total_pages: 1 },
})
export const AccountReply = Envelope(Account, accountExample)
export const AccountDetailReply = Envelope(AccountDetail, {
  ...accountExample,
  users: [userExample],
  keys: [keyExample],
})

const Permissions = Type.Union([
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { description: 'Permission names granted' }),
  Type.Record(Type.String(), Type.Boolean(), { description: 'Permission name → granted' }),
])

const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' })

export const KeyBody = Type.Object(
  {
    user_id: Type.Optional(
      Type.Integer({ minimum: 1, description: 'A user of the account; the main user when omitted' }),
    ),
    label: Type.Optional(Type.String({ maxLength: 100 })),
    expires_at: Type.Optional(
      Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'YYYY-MM-DD or ISO 8601; null = never' }),
    ),
    allowed_ips: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 })),
  },
  { additionalProperties: false },
)

export const CreateAccountBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Email,
    firstname: Type.Optional(Type.String({ maxLength: 100 })),
    lastname: Type.Optional(Type.String({ maxLength: 100 })),
    key: Type.Optional(
      Type.Object(
        {
          label: KeyBody.properties.label,
          expires_at: KeyBody.properties.expires_at,
          allowed_ips: KeyBody.properties.allowed_ips,
        },
        {
          additionalProperties: false,
          description: 'Also create an API key for the main user; it is in the answer once',
        },
      ),
    ),
  },
  { additionalProperties: false },
)
export const CreatedAccountReply = Envelope(
  Type.Object({
    ...AccountDetail.properties,
    api_key: Type.Union([Type.String(), Type.Null()], { description: 'The new key, shown once' }),
  }),
  { ...accountExample, users: [userExample], keys: [keyExample], api_key: 'Xk3v9QbZ...' },
)

export const CreateUserBody = Type.Object(
  {
    email: Email,
    firstname: Type.Optional(Type.String({ maxLength: 100 })),
    lastname: Type.Optional(Type.String({ maxLength: 100 })),
    permissions: Type.Optional(Permissions),
  },
  { additionalProperties: false },
)
export const UserReply = Envelope(User, userExample)

export const KeysReply = Envelope(Type.Object({ keys: Type.Array(ApiKey) }), { keys: [keyExample] })
export const KeyReply = Envelope(ApiKey, keyExample)
export const CreatedKeyReply = Envelope(
  Type.Object({ ...ApiKey.properties, key: Type.String({ description: 'The whole key, shown once' }) }),
  { ...keyExample, key: 'Xk3v9QbZ...' },
)
export const WhitelistBody = Type.Object(
  {
    allowed_ips: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 100,
      description: 'Addresses and CIDR ranges; empty = any address',
    }),
  },
  { additionalProperties: false },
)
export const ExpiryBody = Type.Object(
  {
    expires_at: Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
      description: 'YYYY-MM-DD or ISO 8601; null = never',
    }),
  },
  { additionalProperties: false },
)

export const AuditQuery = Type.Object({
  page: PageQuery.page,
  limit: PageQuery.limit,
  account: Type.Optional(Type.Integer({ minimum: 1, description: 'Customer number' })),
  key_prefix: Type.Optional(Type.String({ maxLength: 64 })),
  path: Type.Optional(Type.String({ maxLength: 255, description: 'Substring of the path' })),
  status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
  from: Type.Optional(Type.String({ description: 'From this time (inclusive): YYYY-MM-DD or ISO 8601' })),
  to: Type.Optional(Type.String({ description: 'Before this time: YYYY-MM-DD or ISO 8601' })),
})
const AuditEntry = Type.Object({
  id: Type.Integer(),
  customer_number: Type.Union([Type.Integer(), Type.Null()]),
  user_id: Type.Union([Type.Integer(), Type.Null()]),
  key_prefix: Type.Union([Type.String(), Type.Null()]),
  ip: Type.String(),
  method: Type.String(),
  path: Type.String(),
  status: Type.Integer(),
  request_id: Type.String(),
  created_at: Time(),
})
export const AuditReply = Envelope(Type.Object({ entries: Type.Array(AuditEntry), pagination: Pagination }), {
  entries: [
    {
      id: 7,
      customer_number: 100001,
      user_id: 1,
      key_prefix: 'Xk3v9QbZ',
      ip: '203.0.113.10',
      method: 'PUT',
      path: '/api/v2/domains/example.com/dns',
      status: 200,
      request_id: 'b3c1…',
      created_at: '2026-11-22T16:00:00.000Z',
    },
  ],
  pagination: { page: 1, limit: 25, total: 1, total_pages: 1 },
})

export const JobsQuery = Type.Object({
  page: PageQuery.page,
  limit: PageQuery.limit,
  status: Type.Optional(Type.Union(['queued', 'running', 'done', 'failed'].map((s) => Type.Literal(s)))),
  kind: Type.Optional(Type.String({ maxLength: 100 })),
  account: Type.Optional(Type.Integer({ minimum: 1, description: 'Customer number' })),
})
const Job = Type.Object({
  id: Type.Integer(),
  kind: Type.String(),
  account_id: Type.Union([Type.Integer(), Type.Null()]),
  status: Type.String({ description: '`queued`, `running`, `done` or `failed`' }),
  attempts: Type.Integer(),
  max_attempts: Type.Integer(),
  crashes: Type.Integer({
    description:
      'Attempts during which the process running the job died (its lease ran out while it ran). At 2 the job is ' +
      'quarantined: `failed`, with a `last_error` starting with `quarantined:`, and not run again until retried',
  }),
  run_at: Time(),
  worker: Type.Union([Type.String(), Type.Null()], { description: 'The worker that ran it last' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  payload: Type.Unknown(),
  result: Type.Unknown(),
  created_at: Time(),
  updated_at: Time(),
  finished_at: NullableTime(),
})
const jobExample = {
  id: 3,
  kind: 'domains.end',
  account_id: 1,
  status: 'failed',
  attempts: 5,
  max_attempts: 5,
  crashes: 0,
  run_at: '2026-11-22T16:00:00.000Z',
  worker: '4242-1a2b3c4d',
  last_error: 'registry unreachable',
  payload: { domainId: 9 },
  result: null,
  created_at: '2026-11-22T15:00:00.000Z',
  updated_at: '2026-11-22T16:00:00.000Z',
  finished_at: '2026-11-22T16:00:00.000Z',
}
export const JobsReply = Envelope(Type.Object({ jobs: Type.Array(Job), pagination: Pagination }), {
  jobs: [jobExample],
  pagination: { page: 1, limit: 25, total: 1, total_pages: 1 },
})
export const JobReply = Envelope(Job, jobExample)

const OutboxStatus = Type.Union([Type.Literal('stored'), Type.Literal('sent'), Type.Literal('failed')], {
  description:
    '`stored`: kept in the outbox by the built-in mail driver, not delivered; `sent`: accepted by the SMTP relay; ' +
    '`failed`: refused by the SMTP relay for good (a temporary failure is retried by the mail job instead)',
})
export const OutboxQuery = Type.Object({
  page: PageQuery.page,
  limit: PageQuery.limit,
  account: Type.Optional(Type.Integer({ minimum: 1, description: 'Customer number' })),
  recipient: Type.Optional(Type.String({ maxLength: 254 })),
  kind: Type.Optional(Type.String({ maxLength: 100 })),
  status: Type.Optional(OutboxStatus),
})
const Message = Type.Object({
  id: Type.Integer(),
  account_id: Type.Union([Type.Integer(), Type.Null()]),
  kind: Type.String(),
  from: Type.String(),
  to: Type.String(),
  subject: Type.String(),
  text_body: Type.String(),
  html_body: Type.Union([Type.String(), Type.Null()]),
  status: OutboxStatus,
  status_detail: Type.Union([Type.String(), Type.Null()], {
    description: "The SMTP relay's reply to the message; null for a stored message",
  }),
  created_at: Time(),
})
const messageExample = {
  id: 1,
  account_id: 1,
  kind: 'ticket.created',
  from: 'hostapi@localhost.localdomain',
  to: 'support@localhost.localdomain',
  subject: 'New ticket 100',
  text_body: 'A new ticket…',
  html_body: null,
  status: 'sent',
  status_detail: '250 2.0.0 Ok: queued as 4dXyZ1',
  created_at: '2026-11-22T16:00:00.000Z',
}
export const OutboxReply = Envelope(Type.Object({ messages: Type.Array(Message), pagination: Pagination }), {
  messages: [messageExample],
  pagination: { page: 1, limit: 25, total: 1, total_pages: 1 },
})
export const MessageReply = Envelope(Message, messageExample)

export const Health = Type.Object({
  status: Type.Integer(),
  status_description: Type.String(),
  /** Shared dependencies this instance works without for now (`redis`: limits per instance); still ready. */
  degraded: Type.Optional(Type.Array(Type.String())),
  data: Type.Object({ database: Type.String(), migrations: Type.String(), redis: Type.Optional(Type.String()) }),
})

export const RunJobsReply = Envelope(Type.Object({ jobs_run: Type.Integer() }), { jobs_run: 3 })

export const DnsResyncBody = Type.Object({
  domains: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
      maxItems: 1000,
      description: 'The zones to rebuild; all of them when absent',
    }),
  ),
})

const ZoneDrift = Type.Object({
  zone: Type.String(),
  missing: Type.Boolean({ description: 'hostapi serves the zone and the DNS server did not have it' }),
  extra: Type.Boolean({ description: 'The server had a zone hostapi does not serve (deleted if hostapi made it)' }),
  differing: Type.Array(Type.String(), { description: 'The RRsets (`name TYPE`) the server had otherwise' }),
  error: Type.Optional(Type.String({ description: 'Why the zone could not be compared or fixed' })),
})

export const DnsResyncReply = Envelope(Type.Object({ drift: Type.Array(ZoneDrift) }), {
  drift: [{ zone: 'example.nl', missing: false, extra: false, differing: ['www.example.nl. A'] }],
})

export const DnsSyncQuery = Type.Object({
  domain: Type.Optional(
    Type.String({ minLength: 1, maxLength: 253, description: 'One zone; every served zone when absent' }),
  ),
  pending: Type.Optional(Type.Boolean({ description: 'Only the zones not in sync (a push waits or failed)' })),
})

const ZoneSync = Type.Object({
  zone: Type.String(),
  serial: Type.Integer({ description: "The zone's serial in hostapi" }),
  in_sync: Type.Boolean({ description: 'The DNS server has every change: the last push took it, none waits' }),
  pushed_serial: Type.Union([Type.Integer(), Type.Null()], { description: 'The serial at the last successful push' }),
  pushed_at: NullableTime('When the last push succeeded'),
  pending_since: NullableTime('Since when a change waits to be pushed; null when none does'),
  last_error: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last push failed; null once one succeeds',
  }),
  last_error_at: NullableTime(),
})

export const DnsSyncReply = Envelope(
  Type.Object({
    pushes: Type.Boolean({ description: 'Whether the DNS driver pushes to another server (false: nothing to sync)' }),
    zones: Type.Array(ZoneSync),
  }),
  {
    pushes: true,
    zones: [
      {
        zone: 'example.nl',
        serial: 2026112703,
        in_sync: false,
        pushed_serial: 2026112702,
        pushed_at: '2026-11-27T10:00:00.000Z',
        pending_since: '2026-11-27T10:02:00.000Z',
        last_error:
          'PowerDNS PATCH /zones/example.nl.: PowerDNS at http://127.0.0.1:8081 cannot be reached (ECONNREFUSED)',
        last_error_at: '2026-11-27T10:02:01.000Z',
      },
    ],
  },
)
