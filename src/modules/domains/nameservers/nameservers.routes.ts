import { Type } from 'typebox'
import { Nullable } from '../../../lib/nullable.js'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import { Envelope, OkMessage, ok, okMessage } from '../../../http/schemas.js'
import { NameserverSchema } from '../domains.schemas.js'
import { errorsFor } from '../../../http/error-responses.js'
import { errors } from '../../../errors.js'

const Profile = Type.Object({ alias: Type.String(), nameservers: Type.Array(NameserverSchema) })
const ProfileListItem = Type.Object({
  alias: Type.String(),
  nameservers: Type.Array(NameserverSchema),
  default: Type.Integer({ description: '1 for the profile new domains get' }),
  readonly: Type.Integer({ description: '1 for the built-in profile' }),
})
const AliasParams = Type.Object({ alias: Type.String({ maxLength: 64 }) })
const NameserverIn = Type.Object({
  hostname: Type.String({ maxLength: 253 }),
  ipv4: Type.Optional(Nullable(Type.String({ maxLength: 15 }))),
  ipv6: Type.Optional(Nullable(Type.String({ maxLength: 45 }))),
})
const Flag = Type.Union([Type.Boolean(), Type.Integer({ minimum: 0, maximum: 1 })])
const CreateBody = Type.Object({
  alias: Type.String({ maxLength: 64, description: 'a-z, 0-9, `.`, `_`, `-`' }),
  nameservers: Type.Array(Type.Union([NameserverIn, Type.String({ maxLength: 253 })]), {
    maxItems: 13,
    description: '2 to 13 nameservers',
  }),
  set_as_default: Type.Optional(Flag),
})
const UpdateBody = Type.Partial(CreateBody)

const example = {
  alias: 'my-ns',
  nameservers: [
    { hostname: 'ns1.example.net', ipv4: '192.0.2.53', ipv6: '' },
    { hostname: 'ns2.example.net', ipv4: '', ipv6: '' },
  ],
}

/** Nameserver profiles, including the read-only built-in `default-mijnhost`. */
export const nameserversRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Nameserver profiles']

  app.get(
    '/domains/nameservers',
    {
      config: { area: 'domains-nameservers' },
      schema: {
        operationId: 'listNameserverProfiles',
        tags,
        summary: 'List nameserver profiles',
        description:
          "The built-in `default-mijnhost` (the provider's nameservers, read-only) first, then the account's own.",
        response: {
          200: Envelope(Type.Object({ profiles: Type.Array(ProfileListItem) }), {
            profiles: [{ ...example, default: 0, readonly: 0 }],
          }),
        },
      },
    },
    async (req) => ok({ profiles: await app.services.nameservers.list(req.caller.accountId) }),
  )

  app.post(
    '/domains/nameservers',
    {
      config: { area: 'domains-nameservers' },
      schema: {
        operationId: 'createNameserverProfile',
        tags,
        summary: 'Create a nameserver profile',
        querystring: DryRunQuery,
        body: CreateBody,
        response: { 200: Envelope(Profile, example) },
      },
    },
    async (req) => ok(await app.services.nameservers.create(req.caller.accountId, req.body, dry(req))),
  )

  app.get(
    '/domains/nameservers/:alias',
    {
      config: { area: 'domains-nameservers', fixture: 'nameserverProfile' },
      schema: {
        operationId: 'getNameserverProfile',
        tags,
        summary: 'Get a nameserver profile',
        description:
          '400 `No nameserver alias set` for a blank alias; 404 `Nameservers name not found` for an unknown one.',
        params: AliasParams,
        response: {
          200: Envelope(Profile, example),
          ...errorsFor('domains-nameservers', { 404: [errors.nameserversNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.nameservers.get(req.caller.accountId, req.params.alias)),
  )

  app.put(
    '/domains/nameservers/:alias',
    {
      config: { area: 'domains-nameservers', fixture: 'nameserverProfile' },
      schema: {
        operationId: 'updateNameserverProfile',
        tags,
        summary: 'Update a nameserver profile',
        description:
          'Changes the alias, the nameservers or the default flag; domains using the profile get the new nameservers. The built-in profile cannot be changed.',
        params: AliasParams,
        querystring: DryRunQuery,
        body: UpdateBody,
        response: {
          200: Envelope(Profile, example),
          ...errorsFor('domains-nameservers', { 404: [errors.nameserversNotFound()] }),
        },
      },
    },
    async (req) =>
      ok(await app.services.nameservers.update(req.caller.accountId, req.params.alias, req.body, dry(req))),
  )

  app.delete(
    '/domains/nameservers/:alias',
    {
      config: { area: 'domains-nameservers', fixture: 'nameserverProfile' },
      schema: {
        operationId: 'deleteNameserverProfile',
        tags,
        summary: 'Delete a nameserver profile',
        description: 'Domains that used it keep their nameservers. The built-in profile cannot be deleted.',
        params: AliasParams,
        querystring: DryRunQuery,
        response: { 200: OkMessage, ...errorsFor('domains-nameservers', { 404: [errors.nameserversNotFound()] }) },
      },
    },
    async (req) => {
      await app.services.nameservers.delete(req.caller.accountId, req.params.alias, dry(req))
      return okMessage('Nameserver profile deleted')
    },
  )
}
