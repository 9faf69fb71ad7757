import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeOrder } from './helpers/fixtures/orders.js'

forEachDialect((dialect) => {
  describe(`orders over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Orders A')
      b = await t.account('Orders B')
    })
    after(() => t.close())

    it('lists no open orders for a new account', async () => {
      const r = await t.request('GET', '/orders/', { key: a.key })
      assert.deepEqual(r.body, { status: 200, status_description: 'Request successful', data: { orders: [] } })
    })

    it('processes an order: a failing item leaves it open with status error and the item errors', async () => {
      const orderId = await makeOrder(t, a)
      const list = await t.request('GET', '/orders', { key: a.key })
      assert.equal(list.status, 200)
      const order = list.body.data.orders.find((o: { order_id: number }) => o.order_id === orderId)
      assert.ok(order)
      assert.equal(order.status, 'error')
      assert.equal(order.services.length, 1)
      const [svc] = order.services
      assert.equal(svc.type, 'hosting')
      assert.equal(svc.name, 'Webhosting Basic')
      assert.equal(typeof svc.cart_id, 'number')
      assert.equal('dns_template_id' in svc, false)
      assert.deepEqual(svc.errors, [{ code: 'hosting_domain', description: 'No domain set for the hosting package' }])

      const one = await t.request('GET', `/orders/${orderId}`, { key: a.key })
      assert.equal(one.status, 200)
      assert.equal(one.body.data.order_id, orderId)
      assert.equal(one.body.data.total_price, 4.99)
      assert.match(one.body.data.created, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
      assert.equal(one.body.data.completed, null)
      assert.equal(one.body.data.services[0].status, 'error')
      assert.equal(one.body.data.services[0].price, 4.99)
    })

    it('fixes an item with PUT, processes the order again and completes it', async () => {
      const orderId = await makeOrder(t, a)
      const cartId = (await t.request('GET', `/orders/${orderId}`, { key: a.key })).body.data.services[0].cart_id
      const put = await t.request('PUT', `/orders/${orderId}/`, {
        key: a.key,
        body: { cart_id: cartId, hosting: { domain: 'example.nl' } },
      })
      assert.equal(put.status, 200)
      assert.equal(put.body.data.status, 'open')
      assert.equal(put.body.data.services[0].status, 'pending')
      assert.deepEqual(put.body.data.services[0].errors, [])
      await t.ctx.jobs.drain()
      const done = await t.request('GET', `/orders/${orderId}`, { key: a.key })
      assert.equal(done.body.data.status, 'completed')
      assert.match(done.body.data.completed, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
      assert.deepEqual(done.body.data.services[0].result, { hosting: 'Webhosting Basic' })
      const list = await t.request('GET', '/orders', { key: a.key })
      assert.equal(
        list.body.data.orders.some((o: { order_id: number }) => o.order_id === orderId),
        false,
        'completed orders are not open',
      )

      const again = await t.request('PUT', `/orders/${orderId}`, { key: a.key, body: { cart_id: cartId } })
      assert.deepEqual(again.body, { status: 400, status_description: 'This order is already completed' })
    })

    it("refuses an unknown cart_id, a bad body and another account's order", async () => {
      const orderId = await makeOrder(t, a)
      const unknown = await t.request('PUT', `/orders/${orderId}`, { key: a.key, body: { cart_id: 999999 } })
      assert.deepEqual(unknown.body, { status: 400, status_description: 'The order has no service with this cart_id' })
      const missing = await t.request('PUT', `/orders/${orderId}`, { key: a.key, body: {} })
      assert.equal(missing.status, 400)
      assert.equal(missing.body.status_description, 'Missing cart_id')
      const other = await t.request('GET', `/orders/${orderId}`, { key: b.key })
      assert.deepEqual(other.body, { status: 404, status_description: 'Order not found' })
      const none = await t.request('GET', '/orders/987654', { key: a.key })
      assert.deepEqual(none.body, { status: 404, status_description: 'Order not found' })
      const bad = await t.request('GET', '/orders/abc', { key: a.key })
      assert.equal(bad.status, 400)
      assert.equal((await t.request('GET', '/orders', { key: b.key })).body.data.orders.length, 0)
    })

    it('keeps a delivered service of an order out of corrections', async () => {
      const { orderId } = await t.ctx.services.orders.createOrder(a.accountId, [
        { type: 'hosting', name: 'Ready', details: { fixed: true }, priceCents: 100 },
        { type: 'hosting', name: 'Broken', details: {}, priceCents: 200 },
      ])
      await t.ctx.jobs.drain()
      const order = (await t.request('GET', `/orders/${orderId}`, { key: a.key })).body.data
      assert.equal(order.status, 'error')
      assert.deepEqual(
        order.services.map((s: { name: string; status: string }) => [s.name, s.status]),
        [
          ['Ready', 'done'],
          ['Broken', 'error'],
        ],
      )
      assert.equal(order.total_price, 3)
      const done = await t.request('PUT', `/orders/${orderId}`, {
        key: a.key,
        body: { cart_id: order.services[0].cart_id },
      })
      assert.deepEqual(done.body, { status: 400, status_description: 'This service of the order is already delivered' })
    })

    it('needs the order permission for a sub-user', async () => {
      const denied = await t.subUser(a, { domains: true })
      assert.deepEqual((await t.request('GET', '/orders', { key: denied.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
      const allowed = await t.subUser(a, { order: true })
      assert.equal((await t.request('GET', '/orders', { key: allowed.key })).status, 200)
    })
  })
})
