import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso, ymd } from '../../../clock.js'
import type { Config } from '../../../config/config.js'
import type { DB } from '../../../db/tables.js'
import type { Db } from '../../../db/database.js'
import { errors } from '../../../errors.js'
import type { PaymentsDriver } from '../../../drivers/payments/payments.js'
import type { Mailer } from '../../mail/mail.service.js'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../../jobs/runner.js'
import { crashPoint } from '../../../ops/crash-points.js'
import { pageOf, pagination } from '../../../lib/paging.js'
import type { IamService } from '../../iam/iam.service.js'
import type { InvoiceLine } from '../account.tables.js'
import { amount, amountText, basisPoints, vatOf } from '../../../lib/money.js'
import type { ProfileService } from '../profile/profile.service.js'
import * as repo from './invoices.repository.js'
import { emitEvent } from '../../webhooks/webhook-events.js'
import type { Invoice } from './invoices.repository.js'
import { renderInvoicePdf } from './invoice-pdf.js'
import type { InvoiceCustomer, InvoiceDetail, InvoiceSummary, NewInvoiceLine } from './invoices.types.js'
export type { InvoiceCustomer, InvoiceDetail, InvoiceSummary, NewInvoiceLine } from './invoices.types.js'
import { present } from '../../../lib/invariant.js'

/** Refuses an invoice without lines, or with an amount in part cents or a quantity below 1 (a programming error). */
function checkLines(lines: NewInvoiceLine[]): void {
  if (lines.length === 0) throw new Error('An invoice needs at least one line')
  for (const l of lines) {
    if (!Number.isInteger(l.amountCents)) throw new Error(`Invoice line amount must be whole cents: ${l.description}`)
    if (l.quantity !== undefined && (!Number.isInteger(l.quantity) || l.quantity < 1))
      throw new Error('Invoice line quantity must be a positive integer')
  }
}

/** The job that marks open invoices paid once the payments driver reports their payment paid. */
export const RECONCILE_JOB = 'invoices.reconcile'
const RECONCILE_EVERY_MS = 15 * 60_000
/** The job that issues an invoice (its payment and mail) when the process that made it died first. */
export const ISSUE_JOB = 'invoices.issue'
// The issuing job waits this long, so it finds the invoice issued by the process that made it.
const ISSUE_GRACE_MS = 2 * 60_000
const RECONCILE_BATCH = 200

/** What InvoicesService is built on. */
export interface InvoicesServiceDeps {
  db: Kysely<DB>
  clock: Clock
  billing: Config['billing']
  payments: PaymentsDriver
  profiles: ProfileService
  iam: IamService
  mail: Mailer
  jobs: JobRunner
}

/** Invoices: made for orders (and by the operator), listed, shown and rendered as PDF. */
export class InvoicesService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly billing: Config['billing']
  private readonly payments: PaymentsDriver
  private readonly profiles: ProfileService
  private readonly iam: IamService
  private readonly mail: Mailer
  private readonly jobs: JobRunner

  constructor(deps: InvoicesServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.billing = deps.billing
    this.payments = deps.payments
    this.profiles = deps.profiles
    this.iam = deps.iam
    this.mail = deps.mail
    this.jobs = deps.jobs
  }

  /** The job that issues an invoice whose process died after committing it (queued with the invoice). */
  readonly issueJob = defineJob({
    name: ISSUE_JOB,
    payload: Type.Object({ accountId: Type.Integer(), invoiceId: Type.Integer() }),
    handle: ({ accountId, invoiceId }) => this.issue(accountId, invoiceId),
  })

  /** The job that reconciles open invoices with their payments, and queues the next run while some stay open. */
  readonly reconcileJob = defineJob({
    name: RECONCILE_JOB,
    payload: Type.Null(),
    handle: async () => {
      const result = await this.reconcilePayments()
      if (result.checked > result.paid) await this.scheduleReconcile(this.db)
      return result
    },
  })

  /**
   * Asks the payments driver about every open invoice's payment and marks the paid ones paid (payments
   * settled by the provider, a webhook or an operator).
   */
  async reconcilePayments(): Promise<{ checked: number; paid: number }> {
    let checked = 0
    let paid = 0
    for (let after = 0; ; ) {
      const batch = await repo.openInvoicesWithPayment(this.db, after, RECONCILE_BATCH)
      if (batch.length === 0) break
      for (const inv of batch) {
        // The batch holds only invoices with a payment reference: none is skipped here.
        if (inv.payment_reference === null) continue
        checked++
        const status = await this.payments.status(inv.payment_reference).catch(() => null)
        if (status === 'paid') {
          await this.setPaid(inv.account_id, inv.id, this.clock.now())
          paid++
        }
      }
      after = batch[batch.length - 1].id
    }
    return { checked, paid }
  }

  // One run queued across every instance (its key); a running one does not count, as it may be finishing without
  // seeing the newest payment.
  private async scheduleReconcile(trx: Db): Promise<void> {
    const runAt = new Date(this.clock.now().getTime() + RECONCILE_EVERY_MS)
    await this.jobs.enqueue(this.reconcileJob, null, { trx, runAt, key: RECONCILE_JOB })
  }

  /**
   * The charger of the orders module: reads the customer (outside any transaction) and answers the writer of an open
   * invoice for the order's lines, VAT added, for the order's transaction.
   */
  async chargeFor(
    accountId: number,
  ): Promise<(trx: Db, input: { orderId: number; lines: NewInvoiceLine[] }) => Promise<{ invoiceId: number }>> {
    const customer = await this.customer(accountId)
    return async (trx, input) => ({ invoiceId: (await this.insert(trx, accountId, customer, input)).id })
  }

  /**
   * Cancels the open invoices of an order in the transaction that cancels the order: nothing of them is due, and
   * their issuing (a queued job) finds them no longer open and does nothing.
   */
  async cancelOfOrder(trx: Db, accountId: number, orderId: number): Promise<void> {
    await repo.cancelOpenOfOrder(trx, accountId, orderId)
  }

  /** The invoices of one of the account's orders, as the customer API lists them (the operator's view of an order). */
  async ofOrder(accountId: number, orderId: number, db: Db = this.db): Promise<InvoiceSummary[]> {
    return (await repo.invoicesOfOrder(db, accountId, orderId)).map((r) => this.summary(r))
  }

  /** Makes an open invoice with VAT at the configured rate and opens its payment with the payments driver. */
  async create(
    accountId: number,
    input: { orderId?: number | null; lines: NewInvoiceLine[]; date?: Date },
  ): Promise<{ invoiceNr: string; id: number; totalCents: number }> {
    const customer = await this.customer(accountId)
    const made = await this.db.transaction().execute((trx) => this.insert(trx, accountId, customer, input))
    await this.issue(accountId, made.id)
    return made
  }

  /**
   * The rows of an open invoice, in the caller's transaction, with the job that issues it (opens its payment and
   * mails it) should this process die before it does so itself; the job waits a while and finds it done.
   */
  private async insert(
    trx: Db,
    accountId: number,
    customer: InvoiceCustomer,
    input: { orderId?: number | null; lines: NewInvoiceLine[]; date?: Date },
  ): Promise<{ invoiceNr: string; id: number; totalCents: number }> {
    checkLines(input.lines)
    const now = input.date ?? this.clock.now()
    const subtotal = input.lines.reduce((s, l) => s + l.amountCents, 0)
    const bp = basisPoints(this.billing.vatPercent)
    const vat = vatOf(subtotal, bp)
    const total = subtotal + vat
    // The number comes from the row id, so concurrent invoices never race for the same number.
    const { id } = await repo.insertInvoice(trx, {
      account_id: accountId,
      invoice_nr: `pending-${randomBytes(8).toString('hex')}`,
      order_id: input.orderId ?? null,
      invoice_date: ymd(now),
      due_date: ymd(new Date(now.getTime() + this.billing.dueDays * 86_400_000)),
      currency: this.billing.currency,
      subtotal_cents: subtotal,
      vat_rate_bp: bp,
      vat_cents: vat,
      total_cents: total,
      status: 'open',
      paid_at: null,
      payment_reference: null,
      payment_url: null,
      customer: JSON.stringify(customer),
      created_at: iso(now),
    })
    const invoiceNr = `${now.getUTCFullYear()}-${String(id).padStart(6, '0')}`
    await repo.updateInvoice(trx, accountId, id, { invoice_nr: invoiceNr })
    await repo.insertLines(
      trx,
      input.lines.map((l, i) => {
        const quantity = l.quantity ?? 1
        return {
          invoice_id: id,
          position: i + 1,
          description: l.description,
          quantity,
          unit_price_cents: Math.round(l.amountCents / quantity),
          amount_cents: l.amountCents,
        }
      }),
    )
    await emitEvent(trx, accountId, 'invoice.issued', () => this.eventData(trx, accountId, id), now)
    const runAt = new Date(this.clock.now().getTime() + ISSUE_GRACE_MS)
    await this.jobs.enqueue(
      this.issueJob,
      { accountId, invoiceId: id },
      { trx, accountId, runAt, key: `invoice:${id}` },
    )
    return { invoiceNr, id, totalCents: total }
  }

  /**
   * Issues an invoice whose rows are committed: opens its payment with the driver (or marks it paid when nothing is
   * due) and mails the customer, the payment's reference and the mail in one transaction (a run stopped before it
   * opens the payment again). Does nothing for one issued already.
   */
  async issue(accountId: number, id: number): Promise<void> {
    const inv = await repo.findInvoice(this.db, accountId, String(id), id)
    if (!inv || inv.id !== id || inv.status !== 'open' || inv.payment_reference !== null) return
    const total = inv.total_cents
    const payment = total > 0 ? await this.openPayment(accountId, { invoiceNr: inv.invoice_nr, total }) : null
    const paymentUrl = payment?.paymentUrl ?? null
    await this.db.transaction().execute(async (trx) => {
      if (payment) {
        await repo.updateInvoice(trx, accountId, id, {
          payment_reference: payment.reference,
          payment_url: payment.paymentUrl,
        })
        await this.scheduleReconcile(trx)
      } else await this.setPaid(accountId, id, new Date(inv.created_at), trx)
      await this.mailIssued(trx, accountId, inv, total, paymentUrl)
    })
    crashPoint('invoices.issue.committed')
    this.jobs.poke()
  }

  /** The mail telling the customer of an issued invoice, queued in the transaction that issues it. */
  private async mailIssued(
    trx: Db,
    accountId: number,
    inv: { invoice_nr: string; due_date: string; customer: { email: string; name?: string } },
    total: number,
    paymentUrl: string | null,
  ): Promise<void> {
    const { customer } = inv
    await this.mail.send(trx, {
      to: customer.email,
      accountId,
      kind: 'invoice.created',
      subject: `Invoice ${inv.invoice_nr}`,
      text:
        `Dear ${customer.name || 'customer'},\n\nInvoice ${inv.invoice_nr} of ${this.billing.seller.name} for ${this.billing.currency} ${amountText(total)} (VAT included) is ready.\n` +
        (total > 0
          ? `Please pay it before ${inv.due_date}${paymentUrl ? `, for example online: ${paymentUrl}` : ''}.\n`
          : 'Nothing is due.\n') +
        `Download it with GET /api/v2/account/invoices/${inv.invoice_nr}/pdf.\n`,
    })
  }

  /** Opens the payment of a new invoice with the driver: its reference and address. */
  private openPayment(accountId: number, invoice: { invoiceNr: string; total: number }) {
    return this.payments.createPayment({
      accountId,
      description: `Invoice ${invoice.invoiceNr}`,
      amountCents: invoice.total,
      currency: this.billing.currency,
    })
  }

  /** Marks an invoice paid (the operator's reconciliation) and settles its payment with the driver. */
  async markPaid(accountId: number, invoiceNr: string): Promise<void> {
    const inv = await this.find(accountId, invoiceNr)
    if (inv.status === 'paid') return
    if (inv.payment_reference) await this.payments.settle(inv.payment_reference)
    await this.setPaid(accountId, inv.id, this.clock.now())
  }

  /** Marks an invoice paid and records `invoice.paid` in the same transaction. */
  private async setPaid(accountId: number, id: number, at: Date, trx?: Db): Promise<void> {
    if (!trx) return this.db.transaction().execute((t) => this.setPaid(accountId, id, at, t))
    await repo.updateInvoice(trx, accountId, id, { status: 'paid', paid_at: iso(at) })
    await emitEvent(trx, accountId, 'invoice.paid', () => this.eventData(trx, accountId, id), at)
  }

  /** An invoice as `GET /account/invoices/{invoice_nr}` shows it, read in the transaction that changed it. */
  async eventData(trx: Db, accountId: number, id: number): Promise<Record<string, unknown>> {
    const inv = present(await repo.findInvoice(trx, accountId, String(id), id), `invoice ${id} just written`)
    return { ...this.detail(inv, await repo.linesOf(trx, accountId, id)) }
  }

  async list(accountId: number, query: { page?: number; limit?: number; search?: string }) {
    const page = pageOf(query)
    const total = await repo.countInvoices(this.db, accountId, query.search)
    const pag = pagination(page, total)
    const rows = await repo.listInvoices(this.db, accountId, {
      search: query.search,
      limit: page.limit,
      offset: page.offset,
    })
    return { invoices: rows.map((r) => this.summary(r)), pagination: pag }
  }

  async get(accountId: number, invoiceNr: string): Promise<InvoiceDetail> {
    const { invoice, lines } = await this.load(accountId, invoiceNr)
    return this.detail(invoice, lines)
  }

  /** The invoice as a PDF document, with its number (for the file name). */
  async pdf(accountId: number, invoiceNr: string): Promise<{ pdf: Buffer; invoiceNr: string }> {
    const { invoice, lines } = await this.load(accountId, invoiceNr)
    const pdf = await renderInvoicePdf({
      invoice: this.detail(invoice, lines),
      customer: invoice.customer,
      seller: this.billing.seller,
    })
    return { pdf, invoiceNr: invoice.invoice_nr }
  }

  private async load(accountId: number, invoiceNr: string): Promise<{ invoice: Invoice; lines: InvoiceLine[] }> {
    const invoice = await this.find(accountId, invoiceNr)
    return { invoice, lines: await repo.linesOf(this.db, accountId, invoice.id) }
  }

  /**
   * The invoice a path names: its number (`2026-000042`), or in digits its integer `id` (`42`, the form clients
   * send) or its number without the hyphen (`2026000042`).
   */
  private async find(accountId: number, ref: string): Promise<Invoice> {
    const digits = /^\d{1,15}$/.test(ref) ? ref : null
    const invoice = digits
      ? await repo.findInvoice(this.db, accountId, `${digits.slice(0, 4)}-${digits.slice(4)}`, Number(digits))
      : await repo.findInvoice(this.db, accountId, ref.trim())
    if (!invoice) throw errors.invoiceNotFound()
    return invoice
  }

  private async customer(accountId: number): Promise<InvoiceCustomer> {
    const account = await this.iam.findAccount(accountId)
    if (!account) throw new Error(`No account ${accountId}`)
    const p = await this.profiles.row(accountId)
    const street = [p.address, p.house_number].filter(Boolean).join(' ')
    const town = [p.zipcode, p.city].filter(Boolean).join('  ')
    return {
      customer_number: account.customer_number,
      name: `${p.firstname} ${p.lastname}`.trim(),
      company: p.company,
      address: [street, town].filter(Boolean),
      country_code: p.country_code,
      vat_number: p.company_vat_number,
      email: p.email_invoices || p.email,
    }
  }

  private paymentStatus(inv: Invoice): string {
    if (inv.status === 'open' && inv.due_date < ymd(this.clock.now())) return 'overdue'
    return inv.status
  }

  private summary(inv: Invoice): InvoiceSummary {
    return {
      id: inv.id,
      invoice_date: inv.invoice_date,
      invoice_nr: inv.invoice_nr,
      total_price: amount(inv.total_cents),
      paid: inv.status === 'paid',
      payment_status: this.paymentStatus(inv),
      payment_url: inv.status === 'paid' || inv.status === 'cancelled' ? null : inv.payment_url,
    }
  }

  private detail(inv: Invoice, lines: InvoiceLine[]): InvoiceDetail {
    return {
      ...this.summary(inv),
      due_date: inv.due_date,
      order_id: inv.order_id,
      currency: inv.currency,
      subtotal_price: amount(inv.subtotal_cents),
      vat_percentage: inv.vat_rate_bp / 100,
      vat_price: amount(inv.vat_cents),
      lines: lines.map((l) => ({
        description: l.description,
        quantity: l.quantity,
        unit_price: amount(l.unit_price_cents),
        total_price: amount(l.amount_cents),
      })),
    }
  }
}
