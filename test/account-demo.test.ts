import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { dialects, startTestApp, type TestApp } from './helpers/app.js'

for (const dialect of dialects) {
  describe(`account demo data (${dialect})`, () => {
    let t: TestApp
    let key: string
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_DEMO: '1' } })
      key = t.server.demoKey!
    })
    after(() => t.close())
    const get = async (path: string) => (await t.request('GET', path, { key })).body

    it('seeds a profile, two payment methods with direct debit as default, and paid and open invoices with PDFs', async () => {
      const profile = (await get('/account/profile')).data
      assert.equal(profile.city, 'Amsterdam')
      assert.equal(profile.company, 'Demo B.V.')
      const pm = (await get('/account/paymethods')).data
      assert.equal(pm.paymethods.length, 2)
      assert.equal(pm.default, 'directdebit')
      assert.equal(pm.default_paymethod_id, pm.paymethods[1].id)
      // Other areas' demo orders add invoices of their own; the account area's are the ones without an order.
      const invoices = (await get('/account/invoices?limit=100')).data.invoices
      const details = await Promise.all(invoices.map(async (i: { invoice_nr: string }) => (await get(`/account/invoices/${i.invoice_nr}`)).data))
      const seeded = details.filter((d: { order_id: number | null }) => d.order_id === null)
      assert.deepEqual(seeded.map((i: { paid: boolean }) => i.paid), [false, true, true])
      assert.equal(seeded[1].lines.length, 2)
      const pdf = await t.request('GET', `/account/invoices/${seeded[0].invoice_nr}/pdf`, { key })
      assert.equal(pdf.status, 200)
      assert.equal((pdf.body as Buffer).subarray(0, 5).toString(), '%PDF-')
    })

    it('seeds tickets with threads from both sides', async () => {
      const tickets = (await get('/account/tickets')).data.tickets
      assert.equal(tickets.length, 2)
      assert.deepEqual(tickets.map((x: { status: string }) => x.status).sort(), ['answered', 'closed'])
      for (const row of tickets) {
        const d = (await get(`/account/tickets/${row.ticket_number}`)).data
        assert.deepEqual(d.thread.map((m: { from: string }) => m.from), ['user', 'support'])
      }
    })

    it('seeds commissions that are paid out, approved, rejected and pending, and one affiliate payment', async () => {
      const commissions = (await get('/affiliate/commissions')).data.commissions
      assert.equal(commissions.length, 4)
      const statuses = await Promise.all(commissions.map(async (c: { id: number }) => (await get(`/affiliate/commissions/${c.id}`)).data.status))
      assert.deepEqual(statuses, ['pending', 'rejected', 'approved', 'paid'])
      const payments = (await get('/affiliate/payments')).data.payments
      assert.equal(payments.length, 1)
      assert.equal(payments[0].amount, 18)
    })
  })
}
