/** One line of a new invoice; `amountCents` is the line total excluding VAT. */
export interface NewInvoiceLine {
  description: string
  amountCents: number
  /** Defaults to 1; the unit price is `amountCents / quantity`. */
  quantity?: number
}

/** The customer as printed on an invoice, frozen when the invoice is made. */
export interface InvoiceCustomer {
  customer_number: number
  name: string
  company: string
  address: string[]
  country_code: string
  vat_number: string
  email: string
}

/** A row of `GET /account/invoices/`. */
export interface InvoiceSummary {
  id: number
  invoice_date: string
  invoice_nr: string
  total_price: number
  paid: boolean
  payment_status: string
  payment_url: string | null
}

/** `GET /account/invoices/{invoice_nr}`. */
export interface InvoiceDetail extends InvoiceSummary {
  due_date: string
  order_id: number | null
  currency: string
  subtotal_price: number
  vat_percentage: number
  vat_price: number
  lines: { description: string; quantity: number; unit_price: number; total_price: number }[]
}
