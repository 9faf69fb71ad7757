import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock, ymd } from '../src/clock.js'
import { addYears } from '../src/lib/domain-name.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { uniqueName } from './helpers/fixtures/domains.js'

const DAY = 86_400_000

forEachDialect((dialect) => {
  describe(`domain renewal (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let clock: ManualClock
    before(async () => {
      clock = new ManualClock()
      t = await startTestApp(dialect, { clock })
      a = await t.account('Renewals')
    })
    after(() => t.close())

    const orderAndProcess = async (domain: string) => {
      const r = await t.request('POST', '/domains/order', { key: a.key, body: { domain } })
      assert.equal(r.status, 200, r.text)
      await t.ctx.jobs.drain()
      return r.body.data.order_id as number
    }
    const invoices = async () =>
      (await t.request('GET', '/account/invoices', { key: a.key })).body.data.pagination.total as number

    it('renews an active domain on its renewal date through a charged order, and schedules the next renewal', async () => {
      const renewed = uniqueName('renew', 'com')
      const cancelled = uniqueName('cancel', 'com')
      await orderAndProcess(renewed)
      await orderAndProcess(cancelled)
      const first = (await t.request('GET', `/domains/${renewed}`, { key: a.key })).body.data.renewal_date
      assert.equal(first, addYears(ymd(clock.now()), 1))
      await t.request('DELETE', `/domains/${cancelled}`, { key: a.key })
      const before = await invoices()

      // Nothing is due before the renewal date.
      clock.advance(300 * DAY)
      await t.ctx.jobs.drain()
      assert.equal((await t.request('GET', `/domains/${renewed}`, { key: a.key })).body.data.renewal_date, first)
      assert.equal(await invoices(), before)

      clock.advance(70 * DAY)
      await t.ctx.jobs.drain()
      const after = (await t.request('GET', `/domains/${renewed}`, { key: a.key })).body.data
      assert.equal(after.renewal_date, addYears(first, 1))
      assert.equal(after.status, 'active')
      assert.equal(await invoices(), before + 1, 'one renewal charged; the cancelled domain is not renewed')
      assert.deepEqual(
        (await t.request('GET', `/domains/${cancelled}`, { key: a.key })).body,
        { status: 400, status_description: 'You have no access to this resource' },
        'the cancelled domain ended',
      )
      assert.deepEqual(
        (await t.request('GET', '/orders', { key: a.key })).body.data.orders,
        [],
        'the renewal order is completed',
      )

      // The next year renews again, once.
      clock.advance(366 * DAY)
      await t.ctx.jobs.drain()
      await t.ctx.jobs.drain()
      assert.equal(
        (await t.request('GET', `/domains/${renewed}`, { key: a.key })).body.data.renewal_date,
        addYears(first, 2),
      )
      assert.equal(await invoices(), before + 2)
    })
  })
})
