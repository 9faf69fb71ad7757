import { Type } from 'typebox'
import { MAX_ID } from '../../../db/ids.js'
import { Envelope, PageQuery, Pagination } from '../../../http/schemas.js'
import { PERMISSIONS } from '../../iam/permissions.js'

const permissionsExample = Object.fromEntries(PERMISSIONS.map((p) => [p, p.startsWith('domains')]))

// `propertyNames` fails validation (Fastify's Ajv removes properties only on `additionalProperties: false`, silently):
// a name outside the list, `__proto__` or `constructor` is a 400.
const Permissions = Type.Record(Type.String(), Type.Boolean(), {
  description: `Permission name → boolean. Only these names: ${PERMISSIONS.join(', ')}; any other name is a 400.`,
  propertyNames: { enum: [...PERMISSIONS] },
  maxProperties: PERMISSIONS.length,
})

const userFields = {
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String(),
  firstname: Type.String(),
  lastname: Type.String(),
  two_factor: Type.Boolean(),
  is_main_user: Type.Boolean({ description: 'True for the primary account contact' }),
  permissions: Type.Record(Type.String(), Type.Boolean()),
}

const userExample = {
  id: 1043,
  username: 'dns@example.nl',
  email: 'dns@example.nl',
  firstname: 'Dana',
  lastname: 'Records',
  two_factor: false,
  is_main_user: false,
  permissions: permissionsExample,
}

/** The user id in the path. */
export const UserParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: MAX_ID, description: 'The id of an account user' }),
})
/** `page`, `limit`, `search` of the user list. */
export const UserListQuery = Type.Object(PageQuery)

/** One account user in the spec's shape, with `permissions`. */
export const UserDetail = Envelope(Type.Object(userFields), userExample)
/** The answer of `GET /account/users/`. */
export const UserList = Envelope(Type.Object({ users: Type.Array(Type.Object(userFields)), pagination: Pagination }), {
  users: [userExample],
  pagination: { page: 1, limit: 25, total: 1, total_pages: 1 },
})

const Name = Type.String({ minLength: 1, maxLength: 64 })

/** The body of `POST /account/users/`. */
export const CreateUserBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    firstname: Name,
    lastname: Name,
    password: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'At least 10 characters; stored only as a scrypt hash',
    }),
    password_confirm: Type.Optional(Type.String({ maxLength: 128 })),
    permissions: Type.Optional(Permissions),
  },
  {
    examples: [
      {
        email: 'dns@example.nl',
        firstname: 'Dana',
        lastname: 'Records',
        password: 'correct horse battery',
        permissions: { domains: true },
      },
    ],
  },
)

/** The body of `PUT /account/users/{id}`. */
export const UpdateUserBody = Type.Object(
  {
    firstname: Type.Optional(Name),
    lastname: Type.Optional(Name),
    permissions: Type.Optional(Permissions),
  },
  {
    description: '`permissions` replaces the set: names left out become false.',
    examples: [{ permissions: { domains: true, 'account-invoices': true } }],
  },
)
