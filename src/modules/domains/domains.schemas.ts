import { Type } from 'typebox'
import { Nullable } from '../../lib/nullable.js'
import { PageQuery, Pagination } from '../../http/schemas.js'

/** Schemas of the domain routes. */

/** The `{domain}` of every /domains/{domain} route. */
export const DomainParams = Type.Object({
  domain: Type.String({
    maxLength: 255,
    description: 'The domain name, e.g. `example.nl` (a trailing dot is allowed)',
  }),
})

/** `GET /domains`. */
export const ListDomainsQuery = Type.Object({
  tags: Type.Optional(
    Type.String({ maxLength: 1000, description: 'Comma-separated tags; a domain matches when it has any of them' }),
  ),
  ...PageQuery,
})

const DomainListItem = Type.Object({
  id: Type.Integer(),
  domain: Type.String(),
  renewal_date: Type.String({ description: 'YYYY-MM-DD' }),
  status: Type.String({ description: '`active` or `pending_cancellation`' }),
  status_id: Type.Integer({ description: '1 active, 2 pending cancellation' }),
  tags: Type.Array(Type.String()),
})

/** `GET /domains`: `pagination` only when paged. */
export const DomainList = Type.Object({
  domains: Type.Array(DomainListItem),
  pagination: Type.Optional(Pagination),
})

/** A nameserver with its glue addresses. */
export const NameserverSchema = Type.Object({
  hostname: Type.String(),
  ipv4: Type.String({ description: 'Glue address, empty when none' }),
  ipv6: Type.String({ description: 'Glue address, empty when none' }),
})

const Handle = Type.Union(
  [
    Type.Object({
      handle_id: Type.Integer({ description: 'The contact profile id' }),
      name: Type.String(),
      type: Type.String({ description: '`person` or `company`' }),
    }),
    Type.Null(),
  ],
  { description: 'Null when no contact profile is set for the role' },
)

/** `GET /domains/{domain}`, typed as the generated clients of the API decode it. */
export const DomainDetail = Type.Object({
  id: Type.Integer(),
  domain: Type.String(),
  renewal_date: Type.String({ description: 'YYYY-MM-DD' }),
  status: Type.String(),
  status_id: Type.Integer(),
  cancellation_date: Nullable(
    Type.String({ description: 'YYYY-MM-DD the domain ends when a cancellation is pending' }),
  ),
  tags: Type.Array(Type.String()),
  nameserver_profile: Nullable(Type.String({ description: 'The nameserver profile the nameservers come from' })),
  nameservers: Type.Array(Type.String(), { description: 'Hostnames of the nameservers' }),
  nameserver_details: Type.Array(NameserverSchema, { description: 'The nameservers with their glue addresses' }),
  dnssec_enabled: Type.Integer({ description: '0 or 1' }),
  dnssec_keys: Type.Array(
    Type.Object({
      alg: Type.Integer({ description: 'The DNSSEC algorithm number' }),
      flags: Type.Integer({ description: '256 (ZSK) or 257 (KSK)' }),
      pubKey: Type.String(),
    }),
  ),
  forwarder: Type.Union(
    [Type.Object({ type: Type.Integer({ description: '301, 302 or 303' }), url: Type.String() }), Type.Null()],
    { description: 'The redirect, or null when none is set' },
  ),
  forwarder_enabled: Type.Boolean(),
  forwarder_blocked_by_hosting: Type.Boolean({ description: 'Always false: this service sells no web hosting' }),
  is_lockable: Type.Boolean(),
  is_locked: Type.Boolean(),
  managed_dns: Type.Boolean({ description: "The zone is served by this service's nameservers" }),
  whitelabel_ns: Type.Boolean(),
  handles: Type.Object({ owner: Handle, admin: Handle, tech: Handle, reseller: Handle, billing: Handle }),
  messages: Type.Array(Type.String()),
})

const Flag = Type.Union([Type.Boolean(), Type.Integer({ minimum: 0, maximum: 1 })])

/** The contact profile id of each role of a domain; `description` says what a role left out or null means. */
export const ContactProfileIds = (description: string) =>
  Type.Object(
    {
      owner: Type.Optional(Nullable(Type.Integer())),
      admin: Type.Optional(Nullable(Type.Integer())),
      tech: Type.Optional(Nullable(Type.Integer())),
      billing: Type.Optional(Nullable(Type.Integer())),
    },
    { description },
  )

/** `PUT /domains/{domain}`. */
export const UpdateDomainBody = Type.Object(
  {
    nameserver: Type.Optional(
      Type.String({ maxLength: 64, description: 'A nameserver profile alias (not together with `nameservers`)' }),
    ),
    nameservers: Type.Optional(
      Type.Array(
        Type.Union([
          Type.String({ maxLength: 253 }),
          Type.Object({
            hostname: Type.String({ maxLength: 253 }),
            ipv4: Type.Optional(Nullable(Type.String({ maxLength: 15 }))),
            ipv6: Type.Optional(Nullable(Type.String({ maxLength: 45 }))),
          }),
        ]),
        { maxItems: 13, description: '2 to 13 hostnames, or objects with glue addresses' },
      ),
    ),
    is_locked: Type.Optional(Flag),
    dnssec: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Flag),
          flags: Type.Optional(Type.Integer({ description: '256 or 257 (a string of digits is taken too)' })),
          alg: Type.Optional(
            Type.Integer({ description: '6, 8, 10, 12, 13, 15 or 16 (5, 7, 14 too); a string of digits is taken too' }),
          ),
          protocol: Type.Optional(Type.Integer({ description: 'Always 3' })),
          pubKey: Type.Optional(Type.String({ maxLength: 4096 })),
        },
        {
          description:
            '`enabled: false` turns DNSSEC off; `enabled: true` or key fields without `enabled` turn it on; `{}` changes nothing. ' +
            "On the provider's nameservers the zone is signed here with a key made here (the key fields are not used); " +
            'on other nameservers the key given is handed to the registry with its DS.',
        },
      ),
    ),
    profile: Type.Optional(ContactProfileIds("Contact profile ids; 0 or null removes the role's contact")),
    forwarder: Type.Optional(
      Type.Object({
        enabled: Type.Optional(Flag),
        type: Type.Optional(Type.Integer({ description: '301, 302 or 303' })),
        url: Type.Optional(Type.String({ maxLength: 2048 })),
      }),
    ),
    tags: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: 100,
        description: 'Replaces the tags; `[]` clears them. Tags use a-z, 0-9, `.`, `_`, `-`',
      }),
    ),
  },
  { additionalProperties: false },
)

/** `DELETE /domains/{domain}`. */
export const CancelResult = Type.Object({
  cancellation_date: Type.String({ description: 'YYYY-MM-DD: the domain ends on this day' }),
})

/** `GET /domains/{domain}/auth-code`. */
export const AuthCode = Type.Object({ auth_code: Type.String() })
