import { Type } from 'typebox'
import { Envelope } from '../../http/schemas.js'

/** The answer of `GET /accounts/{customer_number}/resources`: what the sandbox inspector shows of one account. */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

const ProbeAnswer = Type.Object({
  name: Type.String(),
  type: Type.String(),
  rcode: Type.String({ description: 'NOERROR, NXDOMAIN, REFUSED…, or `timeout` when no answer came' }),
  answers: Type.Array(Type.String(), { description: 'Each answer record: `name ttl type data`' }),
})

const Domain = Type.Object({
  name: Type.String(),
  status: Type.String(),
  renewal_date: Type.String(),
  is_locked: Type.Boolean(),
  dnssec: Type.Boolean(),
  managed_dns: Type.Boolean(),
  zone_serial: Type.Integer(),
  records: Type.Array(
    Type.Object({ type: Type.String(), name: Type.String(), value: Type.String(), ttl: Type.Integer() }),
  ),
  dns: Nullable(
    Type.Array(ProbeAnswer, {
      description:
        'What the built-in DNS server answers for the apex SOA and each record set (the first 20 of the first 20 domains); null when another DNS driver serves the zones',
    }),
  ),
})

const Task = Type.Object({
  id: Type.Integer(),
  action: Type.String(),
  status: Type.String(),
  progress: Type.Integer(),
  attempts: Type.Integer(),
  error: Nullable(Type.String()),
  created_at: Type.String(),
  finished_at: Nullable(Type.String()),
})

const Vps = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  hostname: Type.String(),
  product_id: Type.String(),
  location: Type.String(),
  status: Type.String({
    description: 'The power state: running, stopped, rescue, error, terminated, or a task in progress',
  }),
  rescue: Type.Boolean(),
  created_at: Type.String(),
  tasks: Type.Array(Task, { description: 'The latest 10 tasks, newest first' }),
})

const Certificate = Type.Object({
  id: Type.Integer(),
  common_name: Nullable(Type.String()),
  domains: Type.Unknown({ description: 'The names it covers' }),
  status: Type.String(),
  status_message: Nullable(Type.String()),
  valid_until: Nullable(Type.String()),
  ends_at: Type.String(),
  created_at: Type.String(),
})

export const ResourcesReply = Envelope(
  Type.Object({
    customer_number: Type.Integer(),
    domains: Type.Array(Domain, { description: 'At most 200, by name' }),
    vps: Type.Array(Vps, { description: 'At most 200' }),
    certificates: Type.Array(Certificate, { description: 'At most 200' }),
  }),
  {
    customer_number: 100001,
    domains: [
      {
        name: 'example.nl',
        status: 'active',
        renewal_date: '2027-06-01',
        is_locked: false,
        dnssec: false,
        managed_dns: true,
        zone_serial: 2026112701,
        records: [{ type: 'A', name: 'example.nl', value: '192.0.2.10', ttl: 3600 }],
        dns: [{ name: 'example.nl', type: 'A', rcode: 'NOERROR', answers: ['example.nl 3600 A 192.0.2.10'] }],
      },
    ],
    vps: [
      {
        id: 12,
        name: 'web-1',
        hostname: 'web-1.example.nl',
        product_id: 'vps-s',
        location: 'ams1',
        status: 'running',
        rescue: false,
        created_at: '2026-11-20T10:00:00.000Z',
        tasks: [
          {
            id: 40,
            action: 'reboot',
            status: 'done',
            progress: 100,
            attempts: 1,
            error: null,
            created_at: '2026-11-27T09:00:00.000Z',
            finished_at: '2026-11-27T09:00:05.000Z',
          },
        ],
      },
    ],
    certificates: [
      {
        id: 3,
        common_name: 'example.nl',
        domains: ['example.nl', 'www.example.nl'],
        status: 'issued',
        status_message: null,
        valid_until: '2027-02-25T10:00:00.000Z',
        ends_at: '2027-11-27T10:00:00.000Z',
        created_at: '2026-11-27T10:00:00.000Z',
      },
    ],
  },
)
