/** What the application asks a payment provider to collect. */
export interface PaymentRequest {
  /** The account that pays. */
  accountId: number
  /** Shown to the payer (`Invoice 2026-000001`). */
  description: string
  /** Amount to collect, VAT included, in cents; at least 1. */
  amountCents: number
  /** ISO 4217 (`EUR`). */
  currency: string
}

/** Where a payment stands. */
export type PaymentStatus = 'open' | 'paid' | 'failed' | 'expired'

/** A payment method as the provider knows it. */
export interface PaymentMethodInput {
  /** `creditcard`, `directdebit`, `paypal`. */
  type: string
  holder: string
  /** Card number, IBAN or account e-mail; the provider keeps it, the application only keeps the description. */
  account: string
  /** `YYYY-MM` for cards. */
  expires?: string | null
}

/** Raised by a driver for a request it refuses (bad amount, unknown method type, unknown payment). */
export class PaymentRejected extends Error {}

/**
 * Collects money for invoices. Every implementation passes `contract.test.ts`.
 */
export interface PaymentsDriver {
  /** The payment method types this provider supports. */
  readonly methodTypes: readonly string[]
  /** Opens a payment; resolves with the provider's reference and the URL where the customer pays. */
  createPayment(req: PaymentRequest): Promise<{ reference: string; paymentUrl: string }>
  /** The current status of a payment; throws PaymentRejected for an unknown reference. */
  status(reference: string): Promise<PaymentStatus>
  /** Records that an open payment was paid (a webhook or an operator's reconciliation); idempotent. */
  settle(reference: string): Promise<void>
  /** Stores a payment method with the provider; resolves with its reference and a masked description. */
  registerMethod(accountId: number, method: PaymentMethodInput): Promise<{ reference: string; description: string }>
}
