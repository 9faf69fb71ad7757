import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { ErrorBody, Pagination } from '../schemas.js'

/** The OpenAPI 3.1 document generated from the route schemas, and the docs page that renders it. */
export const openapiPlugin = fp(async (app) => {
  app.addSchema(ErrorBody)
  app.addSchema(Pagination)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
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
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string) || `def-${i}` },
  })
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true })
  app.get(
    '/api/v2/openapi.json',
    { config: { area: 'public', rateLimit: false }, schema: { hide: true } },
    async () => app.swagger(),
  )
})
