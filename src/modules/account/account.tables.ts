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

/** A row of `account_profiles`: one per account, made on first change. */
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

/** A row of `paymethods`: a payment method stored with the payments driver. */
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

/** A row of `invoices`; money in cents. */
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

/** A row of `invoice_lines`; amounts exclude VAT. */
export interface InvoiceLinesTable {
  id: Generated<number>
  invoice_id: number
  position: number
  description: string
  quantity: number
  unit_price_cents: number
  amount_cents: number
}

/** A row of `tickets`. */
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

/** A row of `ticket_messages`: one message of a ticket thread. */
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

/** A stored profile. */
export type AccountProfile = Selectable<AccountProfilesTable>
/** A stored payment method. */
export type Paymethod = Selectable<PaymethodsTable>
/** A stored invoice (its customer as JSON text; invoices.repository decodes it). */
export type InvoiceRow = Selectable<InvoicesTable>
/** A stored invoice line. */
export type InvoiceLine = Selectable<InvoiceLinesTable>
/** A stored ticket. */
export type Ticket = Selectable<TicketsTable>
/** A stored ticket message. */
export type TicketMessage = Selectable<TicketMessagesTable>
