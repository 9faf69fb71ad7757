import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { ok } from '../../../http/schemas.js'
import { errorsFor, PAGED } from '../../../http/error-responses.js'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import { CreateUserBody, UpdateUserBody, UserDetail, UserList, UserListQuery, UserParams } from './users.schemas.js'
import { errors } from '../../../errors.js'

/** Account users (the main user and sub-users) and their permissions. */
export const usersRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/account/users',
    {
      config: { area: 'account-users' },
      schema: {
        operationId: 'listUsers',
        tags: ['Account'],
        summary: 'List account users',
        description: 'The main user first. `search` matches username, first or last name, partially.',
        querystring: UserListQuery,
        response: { 200: UserList, ...errorsFor('account-users', { 400: PAGED }) },
      },
    },
    async (req) => ok(await app.services.users.list(req.caller.accountId, req.query)),
  )

  app.get(
    '/account/users/:id',
    {
      config: { area: 'account-users', fixture: 'user' },
      schema: {
        operationId: 'getUser',
        tags: ['Account'],
        summary: 'Get an account user with permissions',
        params: UserParams,
        response: { 200: UserDetail, ...errorsFor('account-users', { 404: [errors.userNotFound()] }) },
      },
    },
    async (req) => ok(await app.services.users.get(req.caller.accountId, req.params.id)),
  )

  app.post(
    '/account/users',
    {
      config: { area: 'account-users' },
      schema: {
        operationId: 'createUser',
        tags: ['Account'],
        summary: 'Create a sub-user',
        description:
          'Permissions not given are false. At most 10 new users per account per hour (429 with Retry-After).',
        querystring: DryRunQuery,
        body: CreateUserBody,
        response: {
          200: UserDetail,
          ...errorsFor('account-users', {
            400: [
              errors.passwordMismatch(),
              errors.weakPassword('…'),
              errors.emailTaken(),
              errors.cannotGrantPermission('<name>'),
              errors.unknownPermission('<name>'),
            ],
            429: [errors.tooManyNewUsers(1, 10)],
          }),
        },
      },
    },
    async (req) => ok(await app.services.users.create(req.caller, req.body, dry(req)), 'User created'),
  )

  app.put(
    '/account/users/:id',
    {
      config: { area: 'account-users', fixture: 'user' },
      schema: {
        operationId: 'updateUser',
        tags: ['Account'],
        summary: 'Update an account user',
        description:
          "Changes names and replaces the permission set (only the names of the specification's list). The main user's permissions cannot be reduced, and only the main user can change the main user; a sub-user cannot grant or revoke a permission it lacks.",
        params: UserParams,
        querystring: DryRunQuery,
        body: UpdateUserBody,
        response: {
          200: UserDetail,
          ...errorsFor('account-users', {
            400: [
              errors.mainUserPermissions(),
              errors.cannotGrantPermission('<name>'),
              errors.cannotRevokePermission('<name>'),
              errors.unknownPermission('<name>'),
            ],
            403: [errors.mainUserChangedByMainUserOnly()],
            404: [errors.userNotFound()],
          }),
        },
      },
    },
    async (req) => ok(await app.services.users.update(req.caller, req.params.id, req.body, dry(req)), 'User updated'),
  )
}
