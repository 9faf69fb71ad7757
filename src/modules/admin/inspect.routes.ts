import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { errors } from '../../errors.js'
import { adminErrors, errorsFor } from '../../http/error-responses.js'
import { ok } from '../../http/schemas.js'
import { CustomerNumberParams } from './admin.schemas.js'
import { ResourcesReply } from './inspect.schemas.js'

/** Read-only views of one account that the sandbox inspector shows (docs/inspector.md). */
export const adminInspectRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/accounts/:customer_number/resources',
    {
      config: { admin: true },
      schema: {
        operationId: 'adminAccountResources',
        tags: ['Accounts'],
        summary:
          "An account's domains with their records and what the built-in DNS server answers, its VPS with their latest tasks, and its certificates",
        params: CustomerNumberParams,
        response: { 200: ResourcesReply, ...adminErrors, ...errorsFor('', { 404: [errors.accountNotFound()] }) },
      },
    },
    async (req) => ok(await app.services.adminInspect.resources(req.params.customer_number)),
  )
}
