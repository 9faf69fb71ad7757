import type { Generated, Selectable } from 'kysely'

/** Affiliate commissions and the payments that pay them out. */
export interface AffiliateTables {
  affiliate_commissions: AffiliateCommissionsTable
  affiliate_payments: AffiliatePaymentsTable
}

/** A row of `affiliate_commissions`; money in cents, flags 0/1. */
export interface AffiliateCommissionsTable {
  id: Generated<number>
  account_id: number
  date: string
  order_nr: number
  sub_id: string
  description: string
  sale_amount_cents: number
  commission_amount_cents: number
  approved: number
  rejected: number
  rejection_reason: string | null
  paidout: number
  payment_id: number | null
}

/** A row of `affiliate_payments`. */
export interface AffiliatePaymentsTable {
  id: Generated<number>
  account_id: number
  date: string
  amount_cents: number
  /** `bank_transfer`. */
  method: string
  reference: string
  /** `paid`. */
  status: string
  /** The invoice this payment settles, when the operator named one. */
  invoice_nr: string | null
}

/** A stored commission. */
export type AffiliateCommission = Selectable<AffiliateCommissionsTable>
/** A stored affiliate payment. */
export type AffiliatePayment = Selectable<AffiliatePaymentsTable>
