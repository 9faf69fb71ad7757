import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { callerIp } from '../../http/caller.js'
import { Envelope, ok } from '../../http/schemas.js'

const WhoAmI = Type.Object({
  ip: Type.String({ description: 'The address the request came from' }),
  customer_number: Type.Integer({ description: 'The customer number of the account the key belongs to' }),
})

export const toolsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/whoami',
    {
      // The answer names the caller's address: kept per address.
      config: { area: 'any', cache: { byAddress: true, data: false } },
      schema: {
        operationId: 'whoami',
        tags: ['Tools'],
        summary: 'Get your IP address and customer number',
        response: { 200: Envelope(WhoAmI, { ip: '203.0.113.10', customer_number: 100001 }) },
      },
    },
    async (req) => ok({ ip: callerIp(req), customer_number: req.caller.customerNumber }),
  )
}
