import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../errors.js'
import { OkMessage, PageQuery, ok, okMessage } from '../../http/schemas.js'
import { adminErrors } from '../../http/error-responses.js'
import { okJson, sendJson } from '../../http/json-reply.js'
import { TicketDetail, TicketList } from '../account/tickets/tickets.schemas.js'
import { InvoiceDetail, InvoiceList } from '../account/invoices/invoices.schemas.js'
import { CommissionDetail, CommissionList, PaymentDetail } from '../affiliate/affiliate.schemas.js'
import { centsOf } from '../../lib/money.js'
import { adminCatalogRoutes, adminNameRoutes, adminVpsRoutes } from './catalog.routes.js'
import { CustomerNumberParams } from './admin.schemas.js'
import * as S from './operator.schemas.js'

const admin = { admin: true } as const

/** The id of the account with this customer number, or 404 `Account not found`. */
const accountIdOf = (app: FastifyInstance) => async (customerNumber: number) =>
  (await app.services.adminAccounts.accountRow(customerNumber)).id

/** Support: an account's tickets, answers as support, closing a ticket. */
export const adminSupportRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services
  const accountId = accountIdOf(app)

  app.get(
    '/accounts/:customer_number/tickets',
    {
      config: admin,
      schema: {
        operationId: 'adminListTickets',
        tags: ['Support'],
        summary: "List an account's tickets, newest activity first",
        params: CustomerNumberParams,
        querystring: Type.Object(PageQuery),
        response: { 200: TicketList, ...adminErrors },
      },
    },
    async (req, reply) =>
      sendJson(reply, okJson(await s.tickets.list(await accountId(req.params.customer_number), req.query))),
  )

  app.get(
    '/accounts/:customer_number/tickets/:ticket_number',
    {
      config: admin,
      schema: {
        operationId: 'adminGetTicket',
        tags: ['Support'],
        summary: 'Get a ticket with its thread',
        params: Type.Object({ ...CustomerNumberParams.properties, ...S.TicketNumberParams.properties }),
        response: { 200: TicketDetail, ...adminErrors },
      },
    },
    async (req) => ok(await s.tickets.get(await accountId(req.params.customer_number), req.params.ticket_number)),
  )

  app.post(
    '/tickets/:ticket_number/reply',
    {
      config: admin,
      schema: {
        operationId: 'adminAnswerTicket',
        tags: ['Support'],
        summary: 'Answer a ticket as support (the customer is mailed); optionally close it',
        params: S.TicketNumberParams,
        body: S.SupportReplyBody,
        response: { 200: TicketDetail, ...adminErrors },
      },
    },
    async (req) =>
      ok(
        await s.tickets.supportReply(req.params.ticket_number, {
          author: req.body.author ?? 'Support',
          message: req.body.message,
          close: req.body.close,
        }),
        'Ticket answered',
      ),
  )

  app.put(
    '/tickets/:ticket_number/close',
    {
      config: admin,
      schema: {
        operationId: 'adminCloseTicket',
        tags: ['Support'],
        summary: 'Close a ticket',
        params: S.TicketNumberParams,
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async (req) => {
      await s.tickets.close(req.params.ticket_number)
      return okMessage('Ticket closed')
    },
  )
}

/** Affiliate commissions: recording, approving or rejecting them, and the payout. */
export const adminAffiliateRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services
  const accountId = accountIdOf(app)

  app.get(
    '/accounts/:customer_number/commissions',
    {
      config: admin,
      schema: {
        operationId: 'adminListCommissions',
        tags: ['Affiliate'],
        summary: "List an account's affiliate commissions",
        params: CustomerNumberParams,
        querystring: Type.Object(PageQuery),
        response: { 200: CommissionList, ...adminErrors },
      },
    },
    async (req) => ok(await s.affiliate.listCommissions(await accountId(req.params.customer_number), req.query)),
  )

  app.post(
    '/accounts/:customer_number/commissions',
    {
      config: admin,
      schema: {
        operationId: 'adminAddCommission',
        tags: ['Affiliate'],
        summary: 'Record a commission for an order a referred customer placed (pending until approved)',
        params: CustomerNumberParams,
        body: S.CommissionBody,
        response: { 200: CommissionDetail, ...adminErrors },
      },
    },
    async (req) => {
      const id = await accountId(req.params.customer_number)
      const b = req.body
      const commission = await s.affiliate.addCommission(id, {
        orderNr: b.order_nr,
        subId: b.sub_id,
        description: b.description,
        saleCents: centsOf(b.sale_amount),
        commissionCents: centsOf(b.commission_amount),
      })
      return ok(await s.affiliate.getCommission(id, commission), 'Commission added')
    },
  )

  app.put(
    '/accounts/:customer_number/commissions/:id/approve',
    {
      config: admin,
      schema: {
        operationId: 'adminApproveCommission',
        tags: ['Affiliate'],
        summary: 'Approve a commission',
        params: S.CommissionParams,
        response: { 200: CommissionDetail, ...adminErrors },
      },
    },
    async (req) => {
      const id = await accountId(req.params.customer_number)
      await s.affiliate.approve(id, req.params.id)
      return ok(await s.affiliate.getCommission(id, req.params.id), 'Commission approved')
    },
  )

  app.put(
    '/accounts/:customer_number/commissions/:id/reject',
    {
      config: admin,
      schema: {
        operationId: 'adminRejectCommission',
        tags: ['Affiliate'],
        summary: 'Reject a commission with the reason the affiliate sees',
        params: S.CommissionParams,
        body: S.RejectBody,
        response: { 200: CommissionDetail, ...adminErrors },
      },
    },
    async (req) => {
      const id = await accountId(req.params.customer_number)
      await s.affiliate.reject(id, req.params.id, req.body.reason)
      return ok(await s.affiliate.getCommission(id, req.params.id), 'Commission rejected')
    },
  )

  app.post(
    '/accounts/:customer_number/commissions/payout',
    {
      config: admin,
      schema: {
        operationId: 'adminPayOutCommissions',
        tags: ['Affiliate'],
        summary: 'Pay out every approved, unpaid commission in one transfer',
        params: CustomerNumberParams,
        body: S.PayoutBody,
        response: { 200: PaymentDetail, ...adminErrors },
      },
    },
    async (req) => {
      const id = await accountId(req.params.customer_number)
      const paymentId = await s.affiliate.payOut(id, req.body.reference, req.body.invoice_nr ?? null)
      if (paymentId === null) throw errors.adminNothingToPay()
      return ok(await s.affiliate.getPayment(id, paymentId), 'Commissions paid out')
    },
  )
}

/** Billing: an account's invoices, issuing one, marking one paid. */
export const adminBillingRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services
  const accountId = accountIdOf(app)

  app.get(
    '/accounts/:customer_number/invoices',
    {
      config: admin,
      schema: {
        operationId: 'adminListInvoices',
        tags: ['Billing'],
        summary: "List an account's invoices",
        params: CustomerNumberParams,
        querystring: Type.Object(PageQuery),
        response: { 200: InvoiceList, ...adminErrors },
      },
    },
    async (req) => ok(await s.invoices.list(await accountId(req.params.customer_number), req.query)),
  )

  app.post(
    '/accounts/:customer_number/invoices',
    {
      config: admin,
      schema: {
        operationId: 'adminIssueInvoice',
        tags: ['Billing'],
        summary: 'Issue an invoice (VAT added; a payment link is made for an amount due)',
        params: CustomerNumberParams,
        body: S.InvoiceBody,
        response: { 200: InvoiceDetail, ...adminErrors },
      },
    },
    async (req) => {
      const id = await accountId(req.params.customer_number)
      const created = await s.invoices.create(id, {
        lines: req.body.lines.map((l) => ({
          description: l.description,
          amountCents: centsOf(l.amount),
          quantity: l.quantity,
        })),
      })
      return ok(await s.invoices.get(id, created.invoiceNr), 'Invoice issued')
    },
  )

  app.put(
    '/accounts/:customer_number/invoices/:invoice_nr/paid',
    {
      config: admin,
      schema: {
        operationId: 'adminMarkInvoicePaid',
        tags: ['Billing'],
        summary: 'Mark an invoice paid (and settle its payment link)',
        params: S.InvoiceNrParams,
        response: { 200: InvoiceDetail, ...adminErrors },
      },
    },
    async (req) => {
      const id = await accountId(req.params.customer_number)
      await s.invoices.markPaid(id, req.params.invoice_nr)
      return ok(await s.invoices.get(id, req.params.invoice_nr), 'Invoice marked paid')
    },
  )
}

/**
 * The operator's side of the areas, thin over their services, in the order the admin document lists them:
 * extension prices and premium names, support answers to tickets, affiliate commissions and payouts,
 * invoices, the VPS catalogue.
 */
export const operatorRoutes: readonly FastifyPluginAsync[] = [
  adminCatalogRoutes,
  adminNameRoutes,
  adminSupportRoutes,
  adminAffiliateRoutes,
  adminBillingRoutes,
  adminVpsRoutes,
]
