import type { Generated, Selectable } from 'kysely'

/** Affiliate commissions and the payments that pay them out. */
export interface AffiliateTables {
  affiliate_commissions: AffiliateCommissionsTable
  affiliate_payments: AffiliatePaymentsTable
}

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
}

export type AffiliateCommission = Selectable<AffiliateCommissionsTable>
export type AffiliatePayment = Selectable<AffiliatePaymentsTable>
