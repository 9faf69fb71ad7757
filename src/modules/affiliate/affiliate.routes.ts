import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { ok } from '../../http/schemas.js'
import { errorsFor, PAGED } from '../../http/error-responses.js'
import {
  AffiliateListQuery,
  CommissionDetail,
  CommissionList,
  IdParams,
  PaymentDetail,
  PaymentList,
} from './affiliate.schemas.js'
import { errors } from '../../errors.js'

/** Affiliate commissions and payments. */
export const affiliateRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/affiliate/commissions',
    {
      config: { area: 'account-affiliate' },
      schema: {
        operationId: 'listCommissions',
        tags: ['Affiliate'],
        summary: 'List affiliate commissions',
        description: 'Newest first. `search` matches the order number or the sub-id, partially.',
        querystring: AffiliateListQuery,
        response: { 200: CommissionList, ...errorsFor('account-affiliate', { 400: PAGED }) },
      },
    },
    async (req) => ok(await app.services.affiliate.listCommissions(req.caller.accountId, req.query)),
  )

  app.get(
    '/affiliate/commissions/:id',
    {
      config: { area: 'account-affiliate', fixture: 'commission' },
      schema: {
        operationId: 'getCommission',
        tags: ['Affiliate'],
        summary: 'Get an affiliate commission',
        params: IdParams,
        response: { 200: CommissionDetail, ...errorsFor('account-affiliate', { 404: [errors.commissionNotFound()] }) },
      },
    },
    async (req) => ok(await app.services.affiliate.getCommission(req.caller.accountId, req.params.id)),
  )

  app.get(
    '/affiliate/payments',
    {
      config: { area: 'account-affiliate' },
      schema: {
        operationId: 'listAffiliatePayments',
        tags: ['Affiliate'],
        summary: 'List affiliate payments',
        description: 'Newest first. `search` matches the reference, the invoice number or the id, partially.',
        querystring: AffiliateListQuery,
        response: { 200: PaymentList, ...errorsFor('account-affiliate', { 400: PAGED }) },
      },
    },
    async (req) => ok(await app.services.affiliate.listPayments(req.caller.accountId, req.query)),
  )

  app.get(
    '/affiliate/payments/:id',
    {
      config: { area: 'account-affiliate', fixture: 'affiliatePayment' },
      schema: {
        operationId: 'getAffiliatePayment',
        tags: ['Affiliate'],
        summary: 'Get an affiliate payment with its commissions',
        params: IdParams,
        response: {
          200: PaymentDetail,
          ...errorsFor('account-affiliate', { 404: [errors.affiliatePaymentNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.affiliate.getPayment(req.caller.accountId, req.params.id)),
  )
}
