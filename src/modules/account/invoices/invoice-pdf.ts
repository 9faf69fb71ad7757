import type PDFKit from 'pdfkit'
import type { Config } from '../../../config/config.js'
import { lazyRequire } from '../../../lazy-require.js'
import type { InvoiceCustomer, InvoiceDetail } from './invoices.types.js'
import { amountText } from '../../../lib/money.js'
import { pdfText } from './pdf-text.js'

/** pdfkit, loaded with the first invoice rendered, not at start. */
const pdfkit = lazyRequire<typeof PDFKit>('pdfkit')

type Seller = Config['billing']['seller']
type InvoiceInput = { invoice: InvoiceDetail; customer: InvoiceCustomer; seller: Seller }

/** The document and its layout, shared by the parts of the page. */
interface Page {
  doc: PDFKit.PDFDocument
  left: number
  right: number
  width: number
  /** An amount in the invoice's currency. */
  money(n: number): string
}

/** Renders one invoice as an A4 PDF: seller, customer address, number and dates, lines, VAT and totals. */
export function renderInvoicePdf(input: InvoiceInput): Promise<Buffer> {
  const PDFDocument = pdfkit()
  const { invoice: inv, customer, seller } = printable(input)
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    info: { Title: `Invoice ${inv.invoice_nr}`, Author: seller.name, Subject: `Invoice ${inv.invoice_nr}` },
  })
  const chunks: Buffer[] = []
  doc.on('data', (c: Buffer) => chunks.push(c))
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
  })
  const left = 50
  const right = doc.page.width - 50
  const money = (n: number) => `${inv.currency} ${amountText(Math.round(n * 100))}`
  const page: Page = { doc, left, right, width: right - left, money }

  drawSeller(page, seller)
  doc.moveDown(2).fontSize(10)
  const addressTop = doc.y
  const afterAddress = drawCustomer(page, customer, addressTop)
  const afterMeta = drawMeta(page, inv, customer, addressTop)
  const titleTop = Math.max(afterAddress, afterMeta) + 30
  doc.font('Helvetica-Bold').fontSize(16).text(`Invoice ${inv.invoice_nr}`, left, titleTop)
  doc.moveDown(0.8)
  drawLinesAndTotals(page, inv)
  drawPaymentNote(page, inv, seller)
  doc.end()
  return done
}

/** The input with every text made safe for the PDF's standard fonts. */
function printable(input: InvoiceInput): InvoiceInput {
  const i = input.invoice
  const lines = i.lines.map((l) => ({ ...l, description: pdfText(l.description) }))
  const invoice = { ...i, invoice_nr: pdfText(i.invoice_nr), lines }
  const c = input.customer
  const customer = {
    ...c,
    name: pdfText(c.name),
    company: pdfText(c.company),
    address: c.address.map(pdfText),
    vat_number: pdfText(c.vat_number),
  }
  const s = input.seller
  const seller = {
    name: pdfText(s.name),
    address: s.address.map(pdfText),
    vatNumber: pdfText(s.vatNumber),
    iban: pdfText(s.iban),
  }
  return { invoice, customer, seller }
}

function drawSeller({ doc, left }: Page, seller: Seller) {
  doc.font('Helvetica-Bold').fontSize(20).text(seller.name, left, 50)
  doc.font('Helvetica').fontSize(9)
  for (const line of seller.address) doc.text(line)
  if (seller.vatNumber) doc.text(`VAT number: ${seller.vatNumber}`)
  if (seller.iban) doc.text(`IBAN: ${seller.iban}`)
}

/** The customer's address from `top` on the left; returns where it ends. */
function drawCustomer({ doc, left }: Page, customer: InvoiceCustomer, top: number): number {
  if (customer.company) doc.font('Helvetica-Bold').text(customer.company, left, top).font('Helvetica')
  doc.text(customer.name, left, customer.company ? undefined : top)
  for (const line of customer.address) doc.text(line)
  doc.text(customer.country_code)
  if (customer.vat_number) doc.text(`VAT number: ${customer.vat_number}`)
  return doc.y
}

/** Number, dates, customer number, order and status from `top` on the right; returns where they end. */
function drawMeta({ doc, right }: Page, inv: InvoiceDetail, customer: InvoiceCustomer, top: number): number {
  const meta: [string, string][] = [
    ['Invoice number', inv.invoice_nr],
    ['Invoice date', inv.invoice_date],
    ['Due date', inv.due_date],
    ['Customer number', String(customer.customer_number)],
    ...(inv.order_id !== null ? ([['Order', String(inv.order_id)]] as [string, string][]) : []),
    ['Status', inv.paid ? 'Paid' : 'Open'],
  ]
  let y = top
  for (const [k, v] of meta) {
    doc.font('Helvetica').text(k, 330, y, { width: 100 })
    doc.font('Helvetica-Bold').text(v, 430, y, { width: right - 430, align: 'right' })
    y += 14
  }
  return y
}

/** The table of lines (a new page when the current one is full), then subtotal, VAT and total. */
function drawLinesAndTotals({ doc, left, right, width, money }: Page, inv: InvoiceDetail) {
  const cols = { desc: left, qty: left + width * 0.58, unit: left + width * 0.68, total: left + width * 0.84 }
  const row = (cells: [string, string, string, string], bold = false) => {
    const top = doc.y
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(10)
    doc.text(cells[0], cols.desc, top, { width: cols.qty - cols.desc - 10 })
    const bottom = doc.y
    doc.text(cells[1], cols.qty, top, { width: cols.unit - cols.qty - 10, align: 'right' })
    doc.text(cells[2], cols.unit, top, { width: cols.total - cols.unit - 10, align: 'right' })
    doc.text(cells[3], cols.total, top, { width: right - cols.total, align: 'right' })
    doc.y = Math.max(bottom, doc.y) + 4
    doc.x = left
  }
  row(['Description', 'Qty', 'Unit price', 'Amount'], true)
  doc.moveTo(left, doc.y).lineTo(right, doc.y).stroke()
  doc.y += 4
  for (const l of inv.lines) {
    if (doc.y > doc.page.height - 150) doc.addPage()
    row([l.description, String(l.quantity), money(l.unit_price), money(l.total_price)])
  }
  doc.moveTo(left, doc.y).lineTo(right, doc.y).stroke()
  doc.y += 6

  const totals: [string, string, boolean][] = [
    ['Subtotal (excl. VAT)', money(inv.subtotal_price), false],
    [`VAT ${inv.vat_percentage}%`, money(inv.vat_price), false],
    ['Total (incl. VAT)', money(inv.total_price), true],
  ]
  for (const [k, v, bold] of totals) {
    const top = doc.y
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(10)
    doc.text(k, cols.unit - 60, top, { width: cols.total - cols.unit + 50, align: 'right' })
    doc.text(v, cols.total, top, { width: right - cols.total, align: 'right' })
    doc.y = top + 16
  }
}

/** Paid, or how to pay: the amount, due date, IBAN and payment link. */
function drawPaymentNote({ doc, left, width, money }: Page, inv: InvoiceDetail, seller: Seller) {
  const mention = `mentioning invoice ${inv.invoice_nr}`
  const reference = seller.iban ? ` to ${seller.iban}, ${mention}` : `, ${mention}`
  doc.moveDown(2).font('Helvetica').fontSize(9)
  doc.text(
    inv.paid
      ? 'This invoice has been paid. Thank you.'
      : `Please pay ${money(inv.total_price)} before ${inv.due_date}` +
          reference +
          (inv.payment_url ? `, or online: ${inv.payment_url}` : '') +
          '.',
    left,
    doc.y,
    { width },
  )
}
