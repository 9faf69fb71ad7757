import type { Generated, Selectable } from 'kysely'

/** The built-in payments driver's ledger of payment requests. */
export interface PaymentTables {
  payments: PaymentsTable
}

/** A row of `payments`: one payment request of the built-in ledger. */
export interface PaymentsTable {
  id: Generated<number>
  /** The driver's id of the payment, shown in payment URLs. */
  reference: string
  account_id: number | null
  description: string
  amount_cents: number
  currency: string
  /** `open`, `paid`, `failed`, `expired`. */
  status: string
  created_at: string
  paid_at: string | null
}

/** A stored payment request. */
export type PaymentRow = Selectable<PaymentsTable>
