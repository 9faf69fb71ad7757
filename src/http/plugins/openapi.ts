import fp from 'fastify-plugin'
import type { FastifySchema } from 'fastify'
import swagger, { type FastifyDynamicSwaggerOptions, type SwaggerTransform } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { ADMIN_PREFIX } from '../constants.js'
import { Type } from 'typebox'
import { ok, withDocumentedEnums } from '../schemas.js'
import { BODY_EXAMPLES } from '../body-examples.js'
import { webhooksDocument } from '../../modules/webhooks/webhooks.openapi.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The admin API's OpenAPI document, generated like the customer one (`swagger`) from its own routes. */
    adminSwagger: FastifyInstance['swagger']
  }
}

type Openapi = NonNullable<FastifyDynamicSwaggerOptions['openapi']>

/**
 * The @fastify/swagger options of both documents: OpenAPI 3.1, shared schemas named by their `$id`. The
 * generator documents the routes registered in the context it is registered in, and the ones below it.
 */
const generator = (openapi: Openapi, more: FastifyDynamicSwaggerOptions = {}): FastifyDynamicSwaggerOptions => ({
  openapi: { openapi: '3.1.0', ...openapi },
  refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string) || `def-${i}` },
  transformObject: (doc) => optionalBodies('openapiObject' in doc ? doc.openapiObject : doc.swaggerObject),
  ...more,
})

type Operation = { requestBody?: { required?: boolean; content?: Record<string, { schema?: { anyOf?: unknown[] } }> } }

/**
 * The generator marks every request body required; one whose schema takes null (`Type.Union([…, Type.Null()])`) may
 * be left out, and the document says so (a typed client then takes the call without a body).
 */
function optionalBodies<T>(doc: T): T {
  const paths = (doc as { paths?: Record<string, Record<string, Operation>> }).paths ?? {}
  for (const item of Object.values(paths))
    for (const op of Object.values(item)) {
      const body = op?.requestBody
      const schema = body?.content?.['application/json']?.schema
      if (body && schema?.anyOf?.some((s) => (s as { type?: unknown }).type === 'null')) body.required = false
    }
  return doc
}

/** `Idempotency-Key` as the routes with `config.idempotent` take it (read by the idempotency plugin, not validated). */
const IdempotencyHeader = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        'Makes a retry safe: the same key with the same body within 24 hours answers the first response again ' +
        '(with `Idempotent-Replayed: true`); the same key with another body answers 409. Ignored with `?test=1`.',
      examples: ['order-2026-11-27-0001'],
    }),
  ),
})

// The root context sees the admin routes too: they belong to the admin document. Every document shows a route's
// operationId (the name sandbox faults are set by) beside its summary.
const customerDocument: SwaggerTransform = ({ schema, url, route }) => {
  if (url.startsWith(ADMIN_PREFIX)) return { schema: { ...schema, hide: true }, url }
  const idempotent = (route as { config?: { idempotent?: boolean } }).config?.idempotent === true
  const shown = withDocumentedEnums({ ...schema }) as FastifySchema & { operationId?: string; body?: object }
  if (idempotent) shown.headers = IdempotencyHeader
  return { schema: withBodyExample(shown), url }
}

/** A body without examples of its own gets the operation's one from BODY_EXAMPLES (in both documents). */
function withBodyExample<S extends FastifySchema & { operationId?: string; body?: object }>(schema: S): S {
  const example = schema.operationId ? BODY_EXAMPLES[schema.operationId] : undefined
  if (!schema.body || 'examples' in schema.body || example === undefined) return schema
  return { ...schema, body: { ...schema.body, examples: [example] } }
}

/** The customer API's OpenAPI 3.1 document generated from the route schemas, and the docs page that renders it. */
export const openapiPlugin = fp(async (app) => {
  await app.register(
    swagger,
    generator(
      {
        info: {
          title: 'Hosting Account API',
          version: '2',
          description:
            'The Hosting Account API v2 as served by hostapi. Every response uses the envelope ' +
            '`{status, status_description, data}`; `status` is the integer HTTP code. Errors are ' +
            '`{status, status_description}` (validation errors add `errors[]`). Paths are accepted with and ' +
            'without a trailing slash. Send the API key in `API-Key` or as `Authorization: Bearer <key>`.',
        },
        servers: [{ url: '/' }],
        components: {
          securitySchemes: {
            ApiKey: { type: 'apiKey', in: 'header', name: 'API-Key' },
            Bearer: { type: 'http', scheme: 'bearer' },
          },
        },
        security: [{ ApiKey: [] }, { Bearer: [] }],
        webhooks: webhooksDocument(),
      } as Openapi,
      { transform: customerDocument },
    ),
  )
  // The docs page shows both documents (the admin one when the admin API is on this listener), each operation with
  // its operationId.
  const documents = [
    { url: '/api/v2/openapi.json', name: 'Customer API (/api/v2)' },
    ...(app.ctx.config.admin.port === null
      ? [{ url: `${ADMIN_PREFIX}/openapi.json`, name: `Admin and sandbox API (${ADMIN_PREFIX})` }]
      : []),
  ]
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { urls: documents, displayOperationId: true },
  })
  app.get('/api/v2/openapi.json', { config: { area: 'public', rateLimit: false }, schema: { hide: true } }, async () =>
    app.swagger(),
  )
  // The server's root and the API's root, where a newcomer looks first, point to the docs page and the document.
  const pointer = { config: { area: 'public', rateLimit: false }, schema: { hide: true } } as const
  const signpost = ok({ docs: '/docs', openapi: '/api/v2/openapi.json' })
  app.get('/', pointer, async () => signpost)
  app.get('/api/v2', pointer, async () => signpost)
})

// A string answer is plain text (the Prometheus metrics), not JSON; documented enums are shown as in the customer
// document; a body gets its example.
const adminDocument: SwaggerTransform = ({ schema: given, url }) => {
  const shown = withDocumentedEnums({ ...given }) as FastifySchema & { operationId?: string; body?: object }
  const schema = withBodyExample(shown)
  const response = schema.response as Record<string, { type?: unknown }> | undefined
  const text = Object.entries(response ?? {}).filter(([, answer]) => answer.type === 'string')
  if (!text.length) return { schema, url }
  const plain = Object.fromEntries(text.map(([status, s]) => [status, { content: { 'text/plain': { schema: s } } }]))
  return { schema: { ...schema, response: { ...response, ...plain } } as FastifySchema, url }
}

/**
 * The admin API's OpenAPI 3.1 document at `openapi.json` under the admin prefix, generated by the same
 * generator as the customer one. Register it in the admin API's context before its routes.
 */
export const adminOpenapiPlugin = fp(async (app) => {
  await app.register(
    swagger,
    generator(
      {
        info: {
          title: 'hostapi admin API',
          version: '1',
          description:
            'The operator API of hostapi: accounts, users and API keys, the audit log, jobs, the mail outbox, ' +
            'metrics, and in sandbox mode the sandbox controls. Send an admin token (`hostapi admin token create`) ' +
            'as `Authorization: Bearer <token>`. Answers use the same envelope as the customer API. Sandbox state ' +
            '(the clock offset, faults, the journal) lives in the process: run a sandbox as one instance.',
        },
        servers: [{ url: ADMIN_PREFIX }],
        components: { securitySchemes: { AdminToken: { type: 'http', scheme: 'bearer' } } },
        security: [{ AdminToken: [] }],
      },
      { transform: adminDocument, decorator: 'adminSwagger' },
    ),
  )
  app.get('/openapi.json', { config: { admin: 'public' }, schema: { hide: true } }, async () => app.adminSwagger())
})
