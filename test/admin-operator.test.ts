import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, type TestAccount, type TestApp } from './helpers/app.js'
import { startAdminTestApp } from './helpers/admin.js'

forEachDialect((dialect) => {
  describe(`admin API: support, affiliate commissions, invoices (${dialect})`, () => {
    let t: TestApp
    let token: string
    let a: TestAccount
    const adm = (method: string, p: string, body?: unknown, tok = token) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${tok}` } })

    before(async () => {
      ;({ t, token, a } = await startAdminTestApp(dialect))
    })
    after(() => t.close())

    it('answers and closes tickets as support', async () => {
      const opened = await t.request('POST', '/account/tickets', {
        key: a.key,
        body: { subject: 'DNS down', message: 'Help', department: 'support' },
      })
      assert.equal(opened.status, 200, opened.text)
      const n = opened.body.data.ticket_number
      const listed = await adm('GET', `/accounts/${a.customerNumber}/tickets`)
      assert.ok(listed.body.data.tickets.some((x: { ticket_number: number }) => x.ticket_number === n))

      const answer = await adm('POST', `/tickets/${n}/reply`, {
        message: '<p>Fixed <img src="x" onerror="alert(1)"></p>',
        author: 'Sam',
      })
      assert.equal(answer.status, 200, answer.text)
      assert.equal(answer.body.data.status, 'answered')
      const seen = await t.request('GET', `/account/tickets/${n}`, { key: a.key })
      const last = seen.body.data.thread.at(-1)
      assert.equal(last.from, 'support')
      assert.equal(last.author, 'Sam')
      assert.ok(!last.body.includes('img') && last.body.includes('Fixed'))
      await t.ctx.jobs.drain()
      const mail = await adm('GET', `/outbox?account=${a.customerNumber}&kind=ticket.answered`)
      assert.equal(mail.body.data.messages.length, 1)

      assert.deepEqual((await adm('PUT', `/tickets/${n}/close`)).body, {
        status: 200,
        status_description: 'Ticket closed',
      })
      assert.equal((await t.request('GET', `/account/tickets/${n}`, { key: a.key })).body.data.status, 'closed')
      assert.deepEqual((await adm('PUT', '/tickets/99999999/close')).body, {
        status: 404,
        status_description: 'Ticket not found',
      })
      const other = await t.account('Tenant T')
      assert.deepEqual((await adm('GET', `/accounts/${other.customerNumber}/tickets/${n}`)).body, {
        status: 404,
        status_description: 'Ticket not found',
      })
    })

    it('adds, approves, rejects and pays out commissions', async () => {
      const cn = a.customerNumber
      const add = (order: number) =>
        adm('POST', `/accounts/${cn}/commissions`, {
          order_nr: order,
          sale_amount: 100,
          commission_amount: 12.5,
          sub_id: 'blog',
        })
      const c1 = (await add(5001)).body.data
      const c2 = (await add(5002)).body.data
      assert.equal(c1.approved, 0)
      assert.equal(c1.commission_amount, 12.5)
      assert.deepEqual((await adm('POST', `/accounts/${cn}/commissions/payout`, { reference: 'AFF-1' })).body, {
        status: 400,
        status_description: 'There is no approved, unpaid commission to pay out',
      })

      const approved = await adm('PUT', `/accounts/${cn}/commissions/${c1.id}/approve`)
      assert.equal(approved.body.data.approved, 1)
      const rejected = await adm('PUT', `/accounts/${cn}/commissions/${c2.id}/reject`, { reason: 'Order refunded' })
      assert.equal(rejected.status, 200, rejected.text)
      const seen = await t.request('GET', `/affiliate/commissions/${c2.id}`, { key: a.key })
      assert.equal(seen.body.data.rejection_reason, 'Order refunded')

      const paid = await adm('POST', `/accounts/${cn}/commissions/payout`, { reference: 'AFF-1', invoice_nr: 'SB-1' })
      assert.equal(paid.status, 200, paid.text)
      assert.equal(paid.body.data.invoice_nr, 'SB-1')
      assert.equal(paid.body.data.amount, 12.5)
      assert.deepEqual(
        paid.body.data.commissions.map((c: { id: number }) => c.id),
        [c1.id],
      )
      const payments = await t.request('GET', '/affiliate/payments', { key: a.key })
      assert.equal(payments.body.data.payments[0].reference, 'AFF-1')
      assert.equal(payments.body.data.payments[0].invoice_nr, 'SB-1')
      assert.deepEqual((await adm('PUT', `/accounts/${cn}/commissions/${c1.id}/reject`, { reason: 'late' })).body, {
        status: 400,
        status_description: 'A paid-out commission cannot be rejected',
      })
      const other = await t.account('Tenant C')
      assert.deepEqual((await adm('PUT', `/accounts/${other.customerNumber}/commissions/${c1.id}/approve`)).body, {
        status: 404,
        status_description: 'Commission not found',
      })
    })

    it('issues invoices and marks them paid', async () => {
      const cn = a.customerNumber
      const issued = await adm('POST', `/accounts/${cn}/invoices`, {
        lines: [
          { description: 'Consultancy', amount: 150, quantity: 2 },
          { description: 'Setup', amount: 25.5 },
        ],
      })
      assert.equal(issued.status, 200, issued.text)
      const inv = issued.body.data
      assert.equal(inv.subtotal_price, 175.5)
      assert.equal(inv.paid, false)
      const seen = await t.request('GET', `/account/invoices/${inv.invoice_nr}`, { key: a.key })
      assert.equal(seen.body.data.total_price, inv.total_price)
      const paid = await adm('PUT', `/accounts/${cn}/invoices/${inv.invoice_nr}/paid`)
      assert.equal(paid.body.data.paid, true)
      assert.equal((await t.request('GET', `/account/invoices/${inv.invoice_nr}`, { key: a.key })).body.data.paid, true)
      assert.equal((await adm('GET', `/accounts/${cn}/invoices`)).body.data.invoices.length, 1)
      assert.deepEqual((await adm('PUT', `/accounts/${cn}/invoices/NOPE-1/paid`)).body, {
        status: 404,
        status_description: 'Invoice not found',
      })
    })
  })
})
