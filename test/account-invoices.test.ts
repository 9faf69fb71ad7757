import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { extractText, getDocumentProxy } from 'unpdf'
import { ManualClock } from '../src/clock.js'
import { pdfText as printable } from '../src/modules/account/invoices/pdf-text.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import type { OutboxMailDriver } from '../src/drivers/mail/builtin.js'

const pdfText = async (buf: Buffer): Promise<string> => {
  const doc = await getDocumentProxy(new Uint8Array(buf))
  const { text } = await extractText(doc, { mergePages: true })
  return text as string
}

forEachDialect((dialect) => {
  describe(`invoices (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    before(async () => {
      t = await startTestApp(dialect, {
        env: { HOSTAPI_SELLER_NAME: 'Hosting Seller B.V.', HOSTAPI_SELLER_IBAN: 'NL91ABNA0417164300' },
      })
      a = await t.account('Invoice Customer B.V.')
      b = await t.account('Other B.V.')
    })
    after(() => t.close())

    it('placing an order makes an open invoice with 21% VAT and a payment link', async () => {
      const { orderId } = await t.ctx.services.orders.createOrder(a.accountId, [
        {
          type: 'hosting',
          name: 'Webhosting Basic',
          details: {},
          priceCents: 499,
          description: 'Webhosting Basic (1 month)',
        },
        { type: 'hosting', name: 'Webhosting Pro', details: {}, priceCents: 1000 },
      ])
      const list = await t.request('GET', '/account/invoices/', { key: a.key })
      assert.equal(list.status, 200)
      assert.equal(list.body.data.invoices.length, 1)
      const row = list.body.data.invoices[0]
      assert.match(row.invoice_nr, /^\d{4}-\d{6}$/)
      assert.equal(row.total_price, 18.14) // 14.99 + 3.15 VAT (21%, rounded to the cent)
      assert.equal(row.paid, false)
      assert.equal(row.payment_status, 'open')
      assert.match(row.payment_url, /^https:\/\/.+\/pay_[0-9a-f]+$/)
      assert.deepEqual(Object.keys(row).sort(), [
        'id',
        'invoice_date',
        'invoice_nr',
        'paid',
        'payment_status',
        'payment_url',
        'total_price',
      ])

      const detail = await t.request('GET', `/account/invoices/${row.invoice_nr}`, { key: a.key })
      assert.equal(detail.status, 200)
      const d = detail.body.data
      assert.equal(d.order_id, orderId)
      assert.equal(d.subtotal_price, 14.99)
      assert.equal(d.vat_percentage, 21)
      assert.equal(d.vat_price, 3.15)
      assert.equal(d.total_price, 18.14)
      assert.equal(d.currency, 'EUR')
      assert.match(d.invoice_date, /^\d{4}-\d{2}-\d{2}$/)
      assert.ok(d.due_date > d.invoice_date)
      assert.deepEqual(d.lines, [
        { description: 'Webhosting Basic (1 month)', quantity: 1, unit_price: 4.99, total_price: 4.99 },
        { description: 'hosting Webhosting Pro', quantity: 1, unit_price: 10, total_price: 10 },
      ])
    })

    it('serves a real PDF of the invoice with its number, dates, total, lines and the customer address', async () => {
      const profile = (await t.request('GET', '/account/profile', { key: a.key })).body.data
      const put = await t.request('PUT', '/account/profile', {
        key: a.key,
        body: {
          ...profile,
          firstname: 'Łukasz',
          address: 'Keizersgracht',
          house_number: '100',
          zipcode: '1015 AA',
          city: 'Amsterdam',
          country_code: 'NL',
          phone: '201234567',
          phone_country_code: '+31',
        },
      })
      assert.equal(put.status, 200)
      const { invoiceNr } = await t.ctx.services.invoices.create(a.accountId, {
        lines: [
          { description: 'Domain registration example.nl', amountCents: 999 },
          { description: 'SSL certificate', amountCents: 2500, quantity: 2 },
        ],
      })
      const r = await t.request('GET', `/account/invoices/${invoiceNr}/pdf`, { key: a.key })
      assert.equal(r.status, 200)
      assert.equal(r.headers['content-type'], 'application/pdf')
      assert.match(String(r.headers['content-disposition']), new RegExp(`invoice-${invoiceNr}\\.pdf`))
      const buf = r.body as Buffer
      assert.equal(buf.subarray(0, 5).toString(), '%PDF-')
      assert.match(buf.subarray(-8).toString(), /%%EOF/)
      const text = await pdfText(buf)
      assert.ok(text.includes(invoiceNr), 'invoice number')
      assert.ok(text.includes('EUR 42.34'), `total incl. VAT in ${text}`) // 34.99 + 7.35 (7.3479 rounded)
      assert.ok(text.includes('EUR 7.35'), 'VAT')
      assert.ok(text.includes('Domain registration example.nl'))
      assert.ok(text.includes('EUR 12.50'), 'unit price of the two certificates')
      assert.ok(text.includes('Invoice Customer B.V.'), 'customer company')
      assert.ok(text.includes('Keizersgracht 100'), 'customer street')
      assert.ok(text.includes('Lukasz Owner') || text.includes('Lukasz '), `customer name printable in ${text}`)
      assert.ok(text.includes('1015 AA') && text.includes('Amsterdam'), 'customer town')
      const detail = (await t.request('GET', `/account/invoices/${invoiceNr}`, { key: a.key })).body.data
      assert.ok(text.includes(detail.invoice_date) && text.includes(detail.due_date), 'invoice and due dates')
      assert.ok(text.includes('Hosting Seller B.V.'), 'seller')
      assert.ok(text.includes(String(a.customerNumber)), 'customer number')
      assert.ok(text.includes('NL91ABNA0417164300'), 'where to pay')
    })

    it('finds an invoice by its integer id or its number in digits as well as by its number', async () => {
      const { invoiceNr, id } = await t.ctx.services.invoices.create(a.accountId, {
        lines: [{ description: 'By number', amountCents: 1234 }],
      })
      const byNr = await t.request('GET', `/account/invoices/${invoiceNr}`, { key: a.key })
      assert.equal(byNr.status, 200)
      assert.equal(byNr.body.data.id, id)
      for (const ref of [String(id), invoiceNr.replace('-', '')]) {
        const r = await t.request('GET', `/account/invoices/${ref}`, { key: a.key })
        assert.equal(r.status, 200, ref)
        assert.deepEqual(r.body, byNr.body, ref)
        const pdf = await t.request('GET', `/account/invoices/${ref}/pdf`, { key: a.key })
        assert.equal(pdf.status, 200, ref)
        assert.match(String(pdf.headers['content-disposition']), new RegExp(`invoice-${invoiceNr}\\.pdf`))
      }
      const other = await t.ctx.services.invoices.create(b.accountId, { lines: [{ description: 'x', amountCents: 1 }] })
      for (const ref of [String(other.id), other.invoiceNr.replace('-', ''), '999999']) {
        const r = await t.request('GET', `/account/invoices/${ref}`, { key: a.key })
        assert.deepEqual(r.body, { status: 404, status_description: 'Invoice not found' }, ref)
      }
    })

    it("answers 404 Invoice not found for a missing invoice and for another account's, also for the PDF", async () => {
      const { invoiceNr } = await t.ctx.services.invoices.create(b.accountId, {
        lines: [{ description: 'x', amountCents: 100 }],
      })
      for (const p of [
        '/account/invoices/2026-999999',
        `/account/invoices/${invoiceNr}`,
        `/account/invoices/${invoiceNr}/pdf`,
      ]) {
        const r = await t.request('GET', p, { key: a.key })
        assert.equal(r.status, 404, p)
        assert.deepEqual(r.body, { status: 404, status_description: 'Invoice not found' })
        assert.match(String(r.headers['content-type']), /^application\/json/)
      }
      assert.equal((await t.request('GET', `/account/invoices/${invoiceNr}`, { key: b.key })).status, 200)
    })

    it('pages and searches, newest first, and refuses a page past the end', async () => {
      const c = await t.account()
      const made: string[] = []
      for (let i = 0; i < 5; i++)
        made.push(
          (
            await t.ctx.services.invoices.create(c.accountId, {
              lines: [{ description: `L${i}`, amountCents: 100 * (i + 1) }],
            })
          ).invoiceNr,
        )
      const p1 = await t.request('GET', '/account/invoices?limit=2', { key: c.key })
      assert.deepEqual(p1.body.data.pagination, { page: 1, limit: 2, total: 5, total_pages: 3 })
      assert.deepEqual(
        p1.body.data.invoices.map((x: { invoice_nr: string }) => x.invoice_nr),
        [made[4], made[3]],
      )
      const p3 = await t.request('GET', '/account/invoices?limit=2&page=3', { key: c.key })
      assert.deepEqual(
        p3.body.data.invoices.map((x: { invoice_nr: string }) => x.invoice_nr),
        [made[0]],
      )
      const beyond = await t.request('GET', '/account/invoices?limit=2&page=4', { key: c.key })
      assert.deepEqual(beyond.body, { status: 400, status_description: 'Page out of range' })
      const search = await t.request('GET', `/account/invoices?search=${made[2].slice(-3)}`, { key: c.key })
      assert.deepEqual(
        search.body.data.invoices.map((x: { invoice_nr: string }) => x.invoice_nr),
        [made[2]],
      )
      const none = await t.request('GET', '/account/invoices?search=zz%25', { key: c.key })
      assert.deepEqual(none.body.data, { invoices: [], pagination: { page: 1, limit: 25, total: 0, total_pages: 0 } })
      const badLimit = await t.request('GET', '/account/invoices?limit=500', { key: c.key })
      assert.equal(badLimit.status, 400)
      assert.match(badLimit.body.status_description, /limit/)
    })

    it('shows an invoice as paid once the operator settles it, and its payment as paid', async () => {
      const { invoiceNr } = await t.ctx.services.invoices.create(a.accountId, {
        lines: [{ description: 'To be paid', amountCents: 1000 }],
      })
      const before = await t.request('GET', `/account/invoices/${invoiceNr}`, { key: a.key })
      const reference = String(before.body.data.payment_url).split('/').pop()!
      assert.equal(await t.ctx.drivers.payments.status(reference), 'open')
      await t.ctx.services.invoices.markPaid(a.accountId, invoiceNr)
      const after = await t.request('GET', `/account/invoices/${invoiceNr}`, { key: a.key })
      assert.equal(after.body.data.paid, true)
      assert.equal(after.body.data.payment_status, 'paid')
      assert.equal(after.body.data.payment_url, null)
      assert.equal(await t.ctx.drivers.payments.status(reference), 'paid')
      const text = await pdfText((await t.request('GET', `/account/invoices/${invoiceNr}/pdf`, { key: a.key })).body)
      assert.ok(text.includes('has been paid'))
    })

    it('mails a new invoice to the invoice address of the profile, through the job queue', async () => {
      const c = await t.account('Mailed B.V.')
      const profile = (await t.request('GET', '/account/profile', { key: c.key })).body.data
      await t.request('PUT', '/account/profile', {
        key: c.key,
        body: {
          ...profile,
          address: 'Dam',
          house_number: '1',
          zipcode: '1012 JS',
          city: 'Amsterdam',
          phone: '201234567',
          email_invoices: 'billing@mailed.example',
        },
      })
      const { invoiceNr } = await t.ctx.services.invoices.create(c.accountId, {
        lines: [{ description: 'Hosting', amountCents: 1000 }],
      })
      await t.ctx.jobs.drain()
      const outbox = t.ctx.drivers.mail as OutboxMailDriver
      const [m] = await outbox.list({ to: 'billing@mailed.example' })
      assert.equal(m.kind, 'invoice.created')
      assert.equal(m.subject, `Invoice ${invoiceNr}`)
      assert.match(m.text_body, /EUR 12\.10 \(VAT included\)/)
      assert.match(m.text_body, /https:\/\/.+\/pay_/)
    })

    it('lets a sub-user with account-invoices read invoices', async () => {
      const sub = await t.subUser(a, { 'account-invoices': true })
      assert.equal((await t.request('GET', '/account/invoices', { key: sub.key })).status, 200)
      const denied = await t.subUser(a, { 'account-profile': true })
      assert.deepEqual((await t.request('GET', '/account/invoices', { key: denied.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
    })
  })
})

describe('PDF text', () => {
  it('keeps what the standard fonts can print, drops accents they cannot, and marks the rest', () => {
    assert.equal(printable('Zoë Müller — € 12,10 “quoted”'), 'Zoë Müller — € 12,10 “quoted”')
    assert.equal(printable('Łukasz Ğündoğdu, Dvořák, Đorđe'), 'Lukasz Gündogdu, Dvorák, Dorde')
    assert.equal(printable('日本 🚀 Москва'), '?? ? ??????')
  })
})

describe('payment reconciliation', () => {
  it('marks an invoice paid once the payments driver reports its payment paid, and keeps checking while payments are open', async () => {
    const clock = new ManualClock()
    const t = await startTestApp('sqlite', { clock })
    try {
      const a = await t.account()
      const one = await t.ctx.services.invoices.create(a.accountId, {
        lines: [{ description: 'one', amountCents: 1000 }],
      })
      const two = await t.ctx.services.invoices.create(a.accountId, {
        lines: [{ description: 'two', amountCents: 2000 }],
      })
      const get = async (nr: string) => (await t.request('GET', `/account/invoices/${nr}`, { key: a.key })).body.data
      const reference = String((await get(one.invoiceNr)).payment_url)
        .split('/')
        .pop()!
      // The provider settles the payment (a webhook, a bank statement): the invoice follows at the next reconciliation.
      await t.ctx.drivers.payments.settle(reference)
      await t.ctx.jobs.drain()
      assert.equal((await get(one.invoiceNr)).paid, false, 'not before the reconciliation is due')
      clock.advance(16 * 60_000)
      await t.ctx.jobs.drain()
      assert.equal((await get(one.invoiceNr)).paid, true)
      assert.equal((await get(one.invoiceNr)).payment_status, 'paid')
      assert.equal((await get(two.invoiceNr)).paid, false)
      const queued = await t.ctx.db
        .selectFrom('jobs')
        .select('run_at')
        .where('kind', '=', 'invoices.reconcile')
        .where('status', '=', 'queued')
        .execute()
      assert.equal(queued.length, 1, 'the next run is queued while an invoice is open')
      const ref2 = String((await get(two.invoiceNr)).payment_url)
        .split('/')
        .pop()!
      await t.ctx.drivers.payments.settle(ref2)
      clock.advance(16 * 60_000)
      await t.ctx.jobs.drain()
      assert.equal((await get(two.invoiceNr)).paid, true)
      const left = await t.ctx.db
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', 'invoices.reconcile')
        .where('status', '=', 'queued')
        .execute()
      assert.equal(left.length, 0, 'nothing left to check')
    } finally {
      await t.close()
    }
  })
})

describe('invoices with a configured VAT rate', () => {
  it('applies HOSTAPI_VAT_PERCENT', async () => {
    const t = await startTestApp('sqlite', { env: { HOSTAPI_VAT_PERCENT: '9' } })
    try {
      const a = await t.account()
      const { invoiceNr } = await t.ctx.services.invoices.create(a.accountId, {
        orderId: 7,
        lines: [{ description: 'x', amountCents: 1050 }],
      })
      const d = (await t.request('GET', `/account/invoices/${invoiceNr}`, { key: a.key })).body.data
      assert.equal(d.vat_percentage, 9)
      assert.equal(d.vat_price, 0.95) // 94.5 cents rounds half up
      assert.equal(d.total_price, 11.45)
    } finally {
      await t.close()
    }
  })
})
