import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../errors.js'
import { Envelope, OkMessage, PageQuery, Pagination, ok, okMessage } from '../../http/schemas.js'
import { adminErrors } from '../../http/error-responses.js'
import { TicketDetail, TicketList } from '../account/tickets/tickets.schemas.js'
import { InvoiceDetail, InvoiceList } from '../account/invoices/invoices.schemas.js'
import { CommissionDetail, CommissionList, PaymentDetail } from '../affiliate/affiliate.schemas.js'
import { Image } from '../vps/vps.schemas.js'
import * as S from './admin.schemas.js'

const admin = { admin: true } as const
const cents = (eur: number) => Math.round(eur * 100)
const ExtensionPrices = Type.Object({
  extension: Type.String(),
  register_price: Type.String(),
  renew_price: Type.String(),
  transfer_price: Type.String(),
})
const ExtensionsReply = Envelope(Type.Object({ extensions: Type.Array(ExtensionPrices), pagination: Pagination }))

/** The id of the account with this customer number, or 404 `Account not found`. */
const accountIdOf = (app: FastifyInstance) => async (customerNumber: number) =>
  (await app.services.adminAccounts.accountRow(customerNumber)).id

/** The catalogue: the extensions on offer with their prices and terms. */
export const adminCatalogRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services

  app.get(
    '/extensions',
    {
      config: admin,
      schema: {
        operationId: 'adminListExtensions',
        tags: ['Catalogue'],
        summary: 'List the extensions on offer with their prices',
        querystring: Type.Object(PageQuery),
        response: { 200: ExtensionsReply, ...adminErrors },
      },
    },
    async (req) => ok(await s.extensions.list(req.query)),
  )

  app.put(
    '/extensions/:extension',
    {
      config: admin,
      schema: {
        operationId: 'adminSetExtension',
        tags: ['Catalogue'],
        summary: 'Offer an extension or change its prices and terms',
        params: S.ExtensionParams,
        body: S.ExtensionBody,
        response: { 200: S.ExtensionReply, ...adminErrors },
      },
    },
    async (req) => {
      const b = req.body
      const ext = await s.adminCatalog.setExtension(req.params.extension, {
        registerCents: cents(b.register_price),
        renewCents: cents(b.renew_price),
        transferCents: cents(b.transfer_price),
        minPeriod: b.min_period,
        maxPeriod: b.max_period,
        supportsDnssec: b.supports_dnssec,
        supportsPrivacy: b.supports_privacy,
        requiresAuthCode: b.requires_auth_code,
      })
      return ok(await s.extensions.get(ext), 'Extension saved')
    },
  )

  app.delete(
    '/extensions/:extension',
    {
      config: admin,
      schema: {
        operationId: 'adminDeleteExtension',
        tags: ['Catalogue'],
        summary: 'Stop offering an extension',
        params: S.ExtensionParams,
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async (req) => {
      await s.adminCatalog.deleteExtension(req.params.extension)
      return okMessage('Extension removed')
    },
  )
}

/** The names the built-in registry treats apart: premium names with their prices, reserved names. */
export const adminNameRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services
  app.get(
    '/premium-names',
    {
      config: admin,
      schema: {
        operationId: 'adminListPremiumNames',
        tags: ['Catalogue'],
        summary: 'List the premium names of the built-in registry',
        response: { 200: S.PremiumListReply, ...adminErrors },
      },
    },
    async () => ok({ premium_names: await s.adminCatalog.premiumNames() }),
  )

  app.put(
    '/premium-names/:name',
    {
      config: admin,
      schema: {
        operationId: 'adminSetPremiumName',
        tags: ['Catalogue'],
        summary: 'Make a name premium, or change its prices',
        params: S.PremiumParams,
        body: S.PremiumBody,
        response: { 200: S.PremiumReply, ...adminErrors },
      },
    },
    async (req) => {
      const { register_price, renew_price } = req.body
      return ok(
        await s.adminCatalog.setPremium(req.params.name, cents(register_price), cents(renew_price)),
        'Premium name saved',
      )
    },
  )

  app.delete(
    '/premium-names/:name',
    {
      config: admin,
      schema: {
        operationId: 'adminDeletePremiumName',
        tags: ['Catalogue'],
        summary: 'Give a premium name its standard price again',
        params: S.PremiumParams,
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async (req) => {
      await s.adminCatalog.deletePremium(req.params.name)
      return okMessage('Premium name removed')
    },
  )

  app.get(
    '/reserved-names',
    {
      config: admin,
      schema: {
        operationId: 'adminListReservedNames',
        tags: ['Catalogue'],
        summary: 'List the names the built-in registry refuses to register',
        response: { 200: S.ReservedListReply, ...adminErrors },
      },
    },
    async () => ok({ reserved_names: await s.adminCatalog.reservedNames() }),
  )

  app.put(
    '/reserved-names/:name',
    {
      config: admin,
      schema: {
        operationId: 'adminReserveName',
        tags: ['Catalogue'],
        summary: 'Reserve a name: nobody can register it (availability says unavailable)',
        params: S.PremiumParams,
        body: S.ReservedBody,
        response: { 200: S.ReservedReply, ...adminErrors },
      },
    },
    async (req) => ok(await s.adminCatalog.reserve(req.params.name, req.body?.reason ?? ''), 'Name reserved'),
  )

  app.delete(
    '/reserved-names/:name',
    {
      config: admin,
      schema: {
        operationId: 'adminUnreserveName',
        tags: ['Catalogue'],
        summary: 'Release a reserved name',
        params: S.PremiumParams,
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async (req) => {
      await s.adminCatalog.unreserve(req.params.name)
      return okMessage('Name released')
    },
  )
}

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
        params: S.CustomerNumberParams,
        querystring: Type.Object(PageQuery),
        response: { 200: TicketList, ...adminErrors },
      },
    },
    async (req) => ok(await s.tickets.list(await accountId(req.params.customer_number), req.query)),
  )

  app.get(
    '/accounts/:customer_number/tickets/:ticket_number',
    {
      config: admin,
      schema: {
        operationId: 'adminGetTicket',
        tags: ['Support'],
        summary: 'Get a ticket with its thread',
        params: Type.Object({ ...S.CustomerNumberParams.properties, ...S.TicketNumberParams.properties }),
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
        params: S.CustomerNumberParams,
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
        params: S.CustomerNumberParams,
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
        saleCents: cents(b.sale_amount),
        commissionCents: cents(b.commission_amount),
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
        params: S.CustomerNumberParams,
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
        params: S.CustomerNumberParams,
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
        params: S.CustomerNumberParams,
        body: S.InvoiceBody,
        response: { 200: InvoiceDetail, ...adminErrors },
      },
    },
    async (req) => {
      const id = await accountId(req.params.customer_number)
      const created = await s.invoices.create(id, {
        lines: req.body.lines.map((l) => ({
          description: l.description,
          amountCents: cents(l.amount),
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

/** The VPS catalogue: the OS images the hypervisor offers. */
export const adminVpsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services

  app.get(
    '/vps/images',
    {
      config: admin,
      schema: {
        operationId: 'adminListVpsImages',
        tags: ['VPS'],
        summary: 'The OS images the hypervisor offers',
        response: { 200: Envelope(Type.Object({ images: Type.Array(Image) })), ...adminErrors },
      },
    },
    async () => ok({ images: await s.vps.images() }),
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
