import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { ok } from '../../../http/schemas.js'
import { errorsFor, PAGED } from '../../../http/error-responses.js'
import { PdfFile, InvoiceDetail, InvoiceList, InvoiceListQuery, InvoiceParams } from './invoices.schemas.js'
import { errors } from '../../../errors.js'

/** The account's invoices: list, one invoice, and its PDF. */
export const invoicesRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/account/invoices',
    {
      config: { area: 'account-invoices' },
      schema: {
        operationId: 'listInvoices',
        tags: ['Account'],
        summary: 'List invoices',
        description: 'Newest first. `search` matches the invoice number, partially.',
        querystring: InvoiceListQuery,
        response: { 200: InvoiceList, ...errorsFor('account-invoices', { 400: PAGED }) },
      },
    },
    async (req) => ok(await app.services.invoices.list(req.caller.accountId, req.query)),
  )

  app.get(
    '/account/invoices/:invoice_nr',
    {
      config: { area: 'account-invoices', fixture: 'invoice' },
      schema: {
        operationId: 'getInvoice',
        tags: ['Account'],
        summary: 'Get an invoice with its lines, VAT and totals',
        params: InvoiceParams,
        response: { 200: InvoiceDetail, ...errorsFor('account-invoices', { 404: [errors.invoiceNotFound()] }) },
      },
    },
    async (req) => ok(await app.services.invoices.get(req.caller.accountId, req.params.invoice_nr)),
  )

  app.get(
    '/account/invoices/:invoice_nr/pdf',
    {
      config: { area: 'account-invoices', fixture: 'invoice' },
      schema: {
        operationId: 'downloadInvoicePdf',
        tags: ['Account'],
        summary: 'Download an invoice as PDF',
        description: 'Answers `application/pdf`; errors are JSON as everywhere else.',
        params: InvoiceParams,
        response: {
          200: { description: 'The invoice as a PDF document', content: { 'application/pdf': { schema: PdfFile } } },
          ...errorsFor('account-invoices', { 404: [errors.invoiceNotFound()] }),
        },
      },
    },
    async (req, reply) => {
      const { pdf, invoiceNr } = await app.services.invoices.pdf(req.caller.accountId, req.params.invoice_nr)
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="invoice-${invoiceNr.replace(/[^A-Za-z0-9-]/g, '')}.pdf"`)
        .send(pdf)
    },
  )
}
