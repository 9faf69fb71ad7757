import { randomBytes } from 'node:crypto'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import * as repo from './payments.repository.js'
import type { PaymentsDb } from './payments.repository.js'
import {
  PaymentRejected,
  type PaymentMethodInput,
  type PaymentRequest,
  type PaymentStatus,
  type PaymentsDriver,
} from './payments.js'

const TYPES = ['creditcard', 'directdebit', 'paypal'] as const

/**
 * The built-in payments driver: a ledger of payment requests in the `payments` table. No money moves;
 * an operator settles a payment when the bank transfer arrives. Payment URLs point at `baseUrl`.
 */
export class LedgerPaymentsDriver implements PaymentsDriver {
  readonly methodTypes = TYPES

  constructor(
    private readonly db: PaymentsDb,
    private readonly clock: Clock,
    private readonly baseUrl: string,
  ) {}

  async createPayment(req: PaymentRequest): Promise<{ reference: string; paymentUrl: string }> {
    if (!Number.isInteger(req.amountCents) || req.amountCents < 1)
      throw new PaymentRejected('The amount must be a positive number of cents')
    if (!/^[A-Z]{3}$/.test(req.currency)) throw new PaymentRejected('The currency must be an ISO 4217 code')
    const reference = `pay_${randomBytes(12).toString('hex')}`
    await repo.insertPayment(this.db, {
      reference,
      account_id: req.accountId,
      description: req.description,
      amount_cents: req.amountCents,
      currency: req.currency,
      status: 'open',
      created_at: iso(this.clock.now()),
      paid_at: null,
    })
    return { reference, paymentUrl: `${this.baseUrl.replace(/\/+$/, '')}/${reference}` }
  }

  async status(reference: string): Promise<PaymentStatus> {
    const status = await repo.statusOf(this.db, reference)
    if (status === undefined) throw new PaymentRejected(`Unknown payment ${reference}`)
    return status as PaymentStatus
  }

  async settle(reference: string): Promise<void> {
    const status = await this.status(reference)
    if (status === 'paid') return
    if (status !== 'open') throw new PaymentRejected(`Payment ${reference} is ${status}`)
    await repo.markPaid(this.db, reference, iso(this.clock.now()))
  }

  async registerMethod(_accountId: number, m: PaymentMethodInput): Promise<{ reference: string; description: string }> {
    if (!(TYPES as readonly string[]).includes(m.type))
      throw new PaymentRejected(`Unsupported payment method type: ${m.type}`)
    const account = m.account.replace(/\s+/g, '')
    if (account.length < 4) throw new PaymentRejected('The account number is too short')
    const description =
      m.type === 'creditcard'
        ? `Credit card •••• ${account.slice(-4)}`
        : m.type === 'directdebit'
          ? `Direct debit ${account.slice(0, 4).toUpperCase()} •••• ${account.slice(-4)}`
          : `PayPal ${maskEmail(m.account)}`
    return { reference: `pm_${randomBytes(12).toString('hex')}`, description }
  }
}

function maskEmail(s: string): string {
  const [local, domain] = s.split('@')
  return domain ? `${local.slice(0, 1)}•••@${domain}` : '•••'
}
