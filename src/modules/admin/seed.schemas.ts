import { Type } from 'typebox'

/**
 * The seed document: the format of a seed file (HOSTAPI_SEED_FILE, JSON or YAML) and of the body of a sandbox reset.
 */

export const SeedKey = Type.Object(
  {
    key: Type.String({
      pattern: '^[A-Za-z0-9_-]{16,128}$',
      description: 'The fixed key value: 16 to 128 characters of A-Z, a-z, 0-9, _ and -',
    }),
    label: Type.Optional(Type.String({ maxLength: 100 })),
    allowed_ips: Type.Optional(Type.Array(Type.String())),
    expires_at: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)

const SeedUser = Type.Object(
  {
    email: Type.String({ pattern: '^[^\\s@]+@[^\\s@]+$' }),
    firstname: Type.Optional(Type.String()),
    lastname: Type.Optional(Type.String()),
    permissions: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Record(Type.String(), Type.Boolean())])),
    keys: Type.Optional(Type.Array(SeedKey)),
  },
  { additionalProperties: false },
)

const SeedRecord = Type.Object(
  {
    type: Type.String(),
    name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    value: Type.String(),
    ttl: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
)

export const SeedDomain = Type.Object(
  {
    name: Type.String(),
    renewal_date: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' })),
    tags: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z0-9._-]{1,64}$' }))),
    is_locked: Type.Optional(Type.Boolean()),
    records: Type.Optional(Type.Array(SeedRecord)),
  },
  { additionalProperties: false },
)

const SeedAccount = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    email: Type.String({ pattern: '^[^\\s@]+@[^\\s@]+$' }),
    firstname: Type.Optional(Type.String()),
    lastname: Type.Optional(Type.String()),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('suspended')])),
    keys: Type.Optional(Type.Array(SeedKey)),
    users: Type.Optional(Type.Array(SeedUser)),
    domains: Type.Optional(Type.Array(SeedDomain)),
    demo_data: Type.Optional(
      Type.Boolean({
        description:
          "Also give this account the demo's data of every area (domains, VPS, certificates, invoices, tickets…); one account at most",
      }),
    ),
  },
  { additionalProperties: false },
)

/**
 * The seed document (a seed file, HOSTAPI_SEED_FILE, JSON or YAML; or a sandbox reset's body): accounts with their
 * main user, fixed API keys, sub-users with permissions and keys, and domains with DNS records. Loaded on an empty
 * database and on a sandbox reset.
 */
export const SeedFileSchema = Type.Object({ accounts: Type.Array(SeedAccount) }, { additionalProperties: false })
