import type { Generated, Selectable } from 'kysely'

/** The account area's tables: profile, payment methods, invoices, support tickets. */
export interface AccountTables {
  account_profiles: AccountProfilesTable
  paymethods: PaymethodsTable
  invoices: InvoicesTable
  invoice_lines: InvoiceLinesTable
  tickets: TicketsTable
  ticket_messages: TicketMessagesTable
}

export interface AccountProfilesTable {
  id: Generated<number>
  account_id: number
  firstname: string
  lastname: string
  /** Read-only through the API. */
  company: string
  address: string
  house_number: string
  zipcode: string
  city: string
  /** ISO 3166-1 alpha-2, upper case. */
  country_code: string
  phone: string
  /** `+31`. */
  phone_country_code: string
  email: string
  /** Where invoices are sent; empty = `email`. */
  email_invoices: string
  company_vat_number: string
  /** A new e-mail address waiting for verification. */
  pending_email: string | null
  /** SHA-256 of the verification token, hex. */
  pending_email_token_hash: string | null
  pending_email_expires_at: string | null
  /** The default payment method; null = bank transfer. */
  default_paymethod_id: number | null
  updated_at: string
}

export interface PaymethodsTable {
  id: Generated<number>
  account_id: number
  /** `creditcard`, `directdebit`, `paypal`, … */
  type: string
  /** What a user recognises the method by (`Visa •••• 4242`). */
  description: string
  holder: string
  /** `YYYY-MM` for cards. */
  expires: string | null
  /** The payments driver's id of the mandate or token. */
  driver_reference: string
  created_at: string
}

export interface InvoicesTable {
  id: Generated<number>
  account_id: number
  /** `YYYY-NNNNNN`, unique across the service. */
  invoice_nr: string
  order_id: number | null
  /** `YYYY-MM-DD`. */
  invoice_date: string
  /** `YYYY-MM-DD`. */
  due_date: string
  currency: string
  subtotal_cents: number
  /** VAT rate in basis points (2100 = 21%). */
  vat_rate_bp: number
  vat_cents: number
  total_cents: number
  /** `open`, `paid`, `cancelled`. */
  status: string
  paid_at: string | null
  /** The payments driver's reference of the payment. */
  payment_reference: string | null
  payment_url: string | null
  /** JSON snapshot of the customer's name and address when the invoice was made. */
  customer: string
  created_at: string
}

export interface InvoiceLinesTable {
  id: Generated<number>
  invoice_id: number
  position: number
  description: string
  quantity: number
  unit_price_cents: number
  amount_cents: number
}

export interface TicketsTable {
  id: Generated<number>
  account_id: number
  /** Unique across the service; shown to users. */
  ticket_number: number
  subject: string
  /** `support`, `administration`, `sales`, `public_cloud`, `microsoft_365`. */
  department: string
  /** `open`, `answered`, `closed`. */
  status: string
  /** Name of the user who opened it. */
  creator: string
  user_id: number | null
  last_updated: string
  created_at: string
}

export interface TicketMessagesTable {
  id: Generated<number>
  ticket_id: number
  /** `user` or `support`. */
  sender: string
  author: string
  /** Sanitised HTML. */
  body: string
  created_at: string
}

export type AccountProfile = Selectable<AccountProfilesTable>
export type Paymethod = Selectable<PaymethodsTable>
export type Invoice = Selectable<InvoicesTable>
export type InvoiceLine = Selectable<InvoiceLinesTable>
export type Ticket = Selectable<TicketsTable>
export type TicketMessage = Selectable<TicketMessagesTable>
