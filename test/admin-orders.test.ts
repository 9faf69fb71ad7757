import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { iso } from '../src/clock.js'
import { forEachDialect, type TestAccount, type TestApp } from './helpers/app.js'
import { NO_TOKEN, startAdminTestApp } from './helpers/admin.js'
import * as orders from '../src/modules/orders/orders.repository.js'

forEachDialect((dialect) => {
  describe(`admin API: orders of every account, and the repair of a stranded one (${dialect})`, () => {
    let t: TestApp
    let token: string
    let a: TestAccount
    const adm = (method: string, p: string, tok = token) =>
      t.request(method, `/admin/v1${p}`, { headers: { authorization: `Bearer ${tok}` } })
    const orderDomain = (domain: string) => t.request('POST', '/domains/order', { key: a.key, body: { domain } })

    // An order as a process killed after its commit left it (before one transaction held the order and its work):
    // open, its item pending, no invoice and no job.
    const stranded = async (domain: string): Promise<number> => {
      const now = iso(t.ctx.clock.now())
      const { id } = await orders.insertOrder(t.ctx.db, {
        account_id: a.accountId,
        status: 'open',
        total_cents: 999,
        created_at: now,
      })
      await orders.insertItem(t.ctx.db, {
        order_id: id,
        account_id: a.accountId,
        type: 'domain',
        name: domain,
        details: JSON.stringify({ type: 'register', period: 1, profile: {} }),
        price_cents: 999,
        status: 'pending',
        errors: '[]',
        result: null,
        created_at: now,
        updated_at: now,
      })
      return id
    }

    before(async () => {
      ;({ t, token, a } = await startAdminTestApp(dialect))
    })
    after(() => t.close())

    it('retries a stranded order: charges it, processes it, and shows it with its invoice and job', async () => {
      const domain = `stranded-${Date.now()}.com`
      const id = await stranded(domain)
      assert.equal((await orderDomain(domain)).body.status_description, 'This domain is already in an open order')

      const shown = await adm('GET', `/orders/${id}`)
      assert.equal(shown.status, 200, shown.text)
      assert.deepEqual([shown.body.data.status, shown.body.data.invoices, shown.body.data.jobs], ['open', [], []])

      const retried = await adm('POST', `/orders/${id}/retry`)
      assert.equal(retried.status, 200, retried.text)
      assert.equal(retried.body.status_description, 'Order queued')
      assert.equal(retried.body.data.invoices.length, 1, 'the missing invoice is made')
      assert.match(retried.body.data.invoices[0].payment_url, /^https:\/\//)
      assert.deepEqual(
        retried.body.data.jobs.map((j: { status: string }) => j.status),
        ['queued'],
      )
      // A second retry while the job waits queues nothing more, and charges nothing more.
      const again = await adm('POST', `/orders/${id}/retry`)
      assert.equal(again.body.data.jobs.length, 1)
      assert.equal(again.body.data.invoices.length, 1)

      await t.ctx.jobs.drain()
      const done = await adm('GET', `/orders/${id}`)
      assert.equal(done.body.data.status, 'completed')
      assert.deepEqual(
        done.body.data.jobs.map((j: { status: string }) => j.status),
        ['done'],
      )
      assert.equal((await t.request('GET', `/domains/${domain}`, { key: a.key })).status, 200)
      const completedRetry = await adm('POST', `/orders/${id}/retry`)
      assert.deepEqual(completedRetry.body, { status: 400, status_description: 'This order is already completed' })
    })

    it('cancels a stranded order: its items are cancelled and the domain can be ordered again', async () => {
      const domain = `cancelled-${Date.now()}.com`
      const id = await stranded(domain)
      const cancelled = await adm('POST', `/orders/${id}/cancel`)
      assert.equal(cancelled.status, 200, cancelled.text)
      assert.equal(cancelled.body.data.status, 'cancelled')
      assert.deepEqual(
        cancelled.body.data.items.map((i: { status: string }) => i.status),
        ['cancelled'],
      )
      const open = await t.request('GET', '/orders', { key: a.key })
      assert.ok(!JSON.stringify(open.body).includes(domain), 'a cancelled order is not open')
      const fix = await t.request('PUT', `/orders/${id}`, {
        key: a.key,
        body: { cart_id: cancelled.body.data.items[0].cart_id, domain: { nameserver: 'x' } },
      })
      assert.equal(fix.body.status_description, 'This order is cancelled')
      assert.deepEqual((await adm('POST', `/orders/${id}/retry`)).body, {
        status: 400,
        status_description: 'This order is cancelled',
      })

      const ordered = await orderDomain(domain)
      assert.equal(ordered.status, 200, ordered.text)
      await t.ctx.jobs.drain()
      assert.equal((await t.request('GET', `/domains/${domain}`, { key: a.key })).status, 200)
    })

    it('cancel drops the queued processing of an order', async () => {
      const domain = `queued-${Date.now()}.com`
      const ordered = await orderDomain(domain)
      const id = ordered.body.data.order_id as number
      const cancelled = await adm('POST', `/orders/${id}/cancel`)
      assert.equal(cancelled.status, 200, cancelled.text)
      assert.deepEqual(
        cancelled.body.data.jobs.map((j: { status: string; last_error: string }) => [j.status, j.last_error]),
        [['failed', 'The order was cancelled']],
      )
      // Its invoice is cancelled with it, for the customer too, and no payment is asked for.
      assert.deepEqual(
        cancelled.body.data.invoices.map((i: { payment_status: string; payment_url: string | null }) => [
          i.payment_status,
          i.payment_url,
        ]),
        [['cancelled', null]],
      )
      const nr = cancelled.body.data.invoices[0].invoice_nr
      const invoice = await t.request('GET', `/account/invoices/${nr}`, { key: a.key })
      assert.equal(invoice.body.data.payment_status, 'cancelled', invoice.text)
      await t.ctx.jobs.drain()
      const got = await t.request('GET', `/domains/${domain}`, { key: a.key })
      assert.notEqual(got.status, 200, 'the cancelled order registered nothing')
    })

    it('lists orders by status and account, and answers an unknown order 404', async () => {
      const b = await t.account('Tenant B')
      const list = await adm('GET', `/orders?status=cancelled&account=${a.customerNumber}`)
      assert.equal(list.status, 200, list.text)
      const rows = list.body.data.orders as { status: string; account_id: number }[]
      assert.ok(rows.length >= 2)
      assert.ok(rows.every((o) => o.status === 'cancelled' && o.account_id === a.accountId))
      const none = await adm('GET', `/orders?account=${b.customerNumber}`)
      assert.deepEqual(none.body.data.orders, [])
      assert.deepEqual((await adm('GET', '/orders/999999')).body, {
        status: 404,
        status_description: 'Order not found',
      })
      assert.deepEqual((await adm('POST', '/orders/999999/cancel')).body, {
        status: 404,
        status_description: 'Order not found',
      })
      assert.deepEqual((await adm('GET', '/orders', 'adm_wrongwrongwrongwrong')).body, NO_TOKEN)
    })
  })
})
