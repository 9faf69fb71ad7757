import { Type } from 'typebox'
import { Nullable } from '../../../lib/nullable.js'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import { Envelope, OkMessage, ok, okMessage } from '../../../http/schemas.js'
import { errorsFor } from '../../../http/error-responses.js'
import { errors } from '../../../errors.js'
import { RecordTypeIn } from '../dns/dns.schemas.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, description: 'DNS template id' }) })
const Flag = Type.Union([Type.Boolean(), Type.Integer({ minimum: 0, maximum: 1 })])
const RecordIn = Type.Object({
  type: RecordTypeIn(),
  name: Type.Optional(
    Nullable(Type.String({ maxLength: 255, description: 'Relative to the domain; empty or `@` = apex' })),
  ),
  value: Type.String({ maxLength: 8192 }),
  ttl: Type.Optional(Nullable(Type.Integer())),
  priority: Type.Optional(
    Nullable(Type.Integer({ minimum: 0, maximum: 65535, description: 'MX and SRV: put before the value' })),
  ),
})
const RecordOut = Type.Object({ type: Type.String(), name: Type.String(), value: Type.String(), ttl: Type.Integer() })
const Template = Type.Object({
  id: Type.Integer(),
  alias: Type.String(),
  default: Type.Integer({ description: '0 or 1' }),
  records: Type.Array(RecordOut),
})
const Body = Type.Object({
  alias: Type.Optional(Type.String({ maxLength: 100 })),
  default: Type.Optional(Flag),
  records: Type.Optional(Type.Array(RecordIn, { maxItems: 500 })),
})

const example = {
  id: 3,
  alias: 'Web + mail',
  default: 1,
  records: [
    { type: 'A', name: '', value: '203.0.113.10', ttl: 3600 },
    { type: 'CNAME', name: 'www', value: '@', ttl: 3600 },
    { type: 'MX', name: '', value: '10 mail.example.net.', ttl: 3600 },
  ],
}

/** DNS templates: record sets a new domain's zone can start from (`dns_template_id` when ordering). */
export const dnsTemplatesRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['DNS templates']

  app.get(
    '/domains/dns-templates',
    {
      config: { area: 'domains-dns-templates' },
      schema: {
        operationId: 'listDnsTemplates',
        tags,
        summary: 'List DNS templates',
        response: {
          200: Envelope(
            Type.Object({
              templates: Type.Array(Type.Object({ id: Type.Integer(), alias: Type.String(), default: Type.Integer() })),
            }),
            { templates: [{ id: 3, alias: 'Web + mail', default: 1 }] },
          ),
        },
      },
    },
    async (req) => ok({ templates: await app.services.dnsTemplates.list(req.caller.accountId) }),
  )

  app.post(
    '/domains/dns-templates',
    {
      config: { area: 'domains-dns-templates' },
      schema: {
        operationId: 'createDnsTemplate',
        tags,
        summary: 'Create a DNS template',
        description:
          '`alias` is required. Record names are relative to the domain the template is applied to; values are checked as for DNS records. `?test=1` answers `id` 0 without storing the template.',
        querystring: DryRunQuery,
        body: Body,
        response: { 200: Envelope(Template, example) },
      },
    },
    async (req) => ok(await app.services.dnsTemplates.create(req.caller.accountId, req.body, dry(req))),
  )

  app.get(
    '/domains/dns-templates/:id',
    {
      config: { area: 'domains-dns-templates', fixture: 'dnsTemplate' },
      schema: {
        operationId: 'getDnsTemplate',
        tags,
        summary: 'Get a DNS template',
        params: IdParams,
        response: {
          200: Envelope(Template, example),
          ...errorsFor('domains-dns-templates', { 404: [errors.dnsTemplateNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.dnsTemplates.get(req.caller.accountId, req.params.id)),
  )

  app.put(
    '/domains/dns-templates/:id',
    {
      config: { area: 'domains-dns-templates', fixture: 'dnsTemplate' },
      schema: {
        operationId: 'updateDnsTemplate',
        tags,
        summary: 'Update a DNS template',
        description: 'Changes the fields given; `records` replaces all records.',
        params: IdParams,
        querystring: DryRunQuery,
        body: Body,
        response: {
          200: Envelope(Template, example),
          ...errorsFor('domains-dns-templates', { 404: [errors.dnsTemplateNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.dnsTemplates.update(req.caller.accountId, req.params.id, req.body, dry(req))),
  )

  app.delete(
    '/domains/dns-templates/:id',
    {
      config: { area: 'domains-dns-templates', fixture: 'dnsTemplate' },
      schema: {
        operationId: 'deleteDnsTemplate',
        tags,
        summary: 'Delete a DNS template',
        params: IdParams,
        querystring: DryRunQuery,
        response: { 200: OkMessage, ...errorsFor('domains-dns-templates', { 404: [errors.dnsTemplateNotFound()] }) },
      },
    },
    async (req) => {
      await app.services.dnsTemplates.delete(req.caller.accountId, req.params.id, dry(req))
      return okMessage('DNS template deleted')
    },
  )
}
