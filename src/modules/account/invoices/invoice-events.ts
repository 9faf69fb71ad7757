import type { Db } from '../../../db/database.js'
import type { EventSampler, EventSamplers } from '../../webhooks/webhook-events.js'
import * as repo from './invoices.repository.js'

/** An invoice as `GET /account/invoices/{invoice_nr}` shows it: the data of the invoice events. */
type InvoiceView = (db: Db, accountId: number, id: number) => Promise<Record<string, unknown>>

/**
 * The invoice events' data from the account's newest invoice (a paid one for `invoice.paid`, when there is one), as
 * issuing and payment send them (sandbox triggers); `view` is the invoices service's own.
 */
export function invoiceEventSamplers(view: InvoiceView): EventSamplers {
  const latest =
    (status?: string): EventSampler =>
    async (db, accountId) => {
      const id =
        (status ? await repo.latestInvoiceId(db, accountId, status) : undefined) ??
        (await repo.latestInvoiceId(db, accountId))
      return id === undefined ? undefined : { data: await view(db, accountId, id) }
    }
  return { 'invoice.issued': latest(), 'invoice.paid': latest('paid') }
}
