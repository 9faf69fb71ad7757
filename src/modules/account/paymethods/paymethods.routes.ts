import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { ok } from '../../../http/schemas.js'
import { errorsFor } from '../../../http/error-responses.js'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import { DefaultPaymethod, PaymethodList, SetDefaultPaymethodBody } from './paymethods.schemas.js'
import { errors } from '../../../errors.js'

/** Payment methods and the default one. */
export const paymethodsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/account/paymethods',
    {
      config: { area: 'account-paymethods' },
      schema: {
        operationId: 'listPaymethods',
        tags: ['Account'],
        summary: 'List payment methods and the default',
        response: { 200: PaymethodList, ...errorsFor('account-paymethods') },
      },
    },
    async (req) => ok(await app.services.paymethods.list(req.caller.accountId)),
  )

  app.put(
    '/account/paymethods',
    {
      config: { area: 'account-paymethods' },
      schema: {
        operationId: 'updateDefaultPaymethod',
        tags: ['Account'],
        summary: 'Update the default payment method',
        description:
          'Body: `default_paymethod_id` (an id from the list) or `paymethod: "bank_transfer"`; an unknown id answers 400.',
        querystring: DryRunQuery,
        body: SetDefaultPaymethodBody,
        response: {
          200: DefaultPaymethod,
          ...errorsFor('account-paymethods', {
            400: [errors.paymethodChoice(), errors.unknownPaymethod('<id>')],
          }),
        },
      },
    },
    async (req) => ok(await app.services.paymethods.setDefault(req.caller.accountId, req.body, dry(req))),
  )
}
