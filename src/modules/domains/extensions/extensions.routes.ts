import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Envelope, PageQuery, Pagination, ok } from '../../../http/schemas.js'
import { errorsFor } from '../../../http/error-responses.js'
import { errors } from '../../../errors.js'

const Prices = {
  extension: Type.String({ description: 'The TLD, without the dot' }),
  register_price: Type.String({ description: 'EUR excluding VAT, e.g. "9.99"' }),
  renew_price: Type.String(),
  transfer_price: Type.String(),
}
const Extension = Type.Object({
  ...Prices,
  min_period: Type.Integer({ description: 'Years' }),
  max_period: Type.Integer({ description: 'Years' }),
  supports_dnssec: Type.Boolean(),
  supports_privacy: Type.Boolean(),
  requires_auth_code: Type.Boolean({ description: 'A transfer needs the auth code' }),
  dnssec_allowed: Type.Boolean({ description: 'The same as `supports_dnssec`, under the name clients read' }),
  transfer_auth_code_required: Type.Boolean({
    description: 'The same as `requires_auth_code`, under the name clients read',
  }),
})
const com = { extension: 'com', register_price: '9.99', renew_price: '12.99', transfer_price: '9.99' }

/** Extension (TLD) prices. */
export const extensionsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/domains/extensions',
    {
      config: { area: 'domains' },
      schema: {
        operationId: 'listDomainExtensions',
        tags: ['Domain extensions'],
        summary: 'List domain extensions and their prices',
        description:
          'Paged; `search` matches part of the extension. A page beyond the last answers 400 `Page out of range`.',
        querystring: Type.Object(PageQuery),
        response: {
          200: Envelope(Type.Object({ extensions: Type.Array(Type.Object(Prices)), pagination: Pagination }), {
            extensions: [com],
            pagination: { page: 1, limit: 25, total: 1, total_pages: 1 },
          }),
        },
      },
    },
    async (req) => ok(await app.services.extensions.list(req.query)),
  )

  app.get(
    '/domains/extensions/:extension',
    {
      config: { area: 'domains', fixture: 'extension' },
      schema: {
        operationId: 'getDomainExtension',
        tags: ['Domain extensions'],
        summary: 'Get one domain extension',
        description: 'The extension written `com` or `.com`; 404 `Extension not found` when it is not offered.',
        params: Type.Object({ extension: Type.String({ maxLength: 63 }) }),
        response: {
          200: Envelope(Extension, {
            ...com,
            min_period: 1,
            max_period: 10,
            supports_dnssec: true,
            supports_privacy: true,
            requires_auth_code: true,
            dnssec_allowed: true,
            transfer_auth_code_required: true,
          }),
          ...errorsFor('domains', { 404: [errors.extensionNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.extensions.get(req.params.extension)),
  )
}
