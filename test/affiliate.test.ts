import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'

forEachDialect((dialect) => {
  describe(`affiliate commissions and payments (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let clock: ManualClock
    const ids: Record<string, number> = {}
    let paymentId: number

    before(async () => {
      clock = new ManualClock()
      t = await startTestApp(dialect, { clock })
      a = await t.account()
      const aff = t.ctx.services.affiliate
      ids.paid = await aff.addCommission(a.accountId, {
        orderNr: 880001,
        subId: 'blog',
        saleCents: 5988,
        commissionCents: 599,
        description: 'VPS Medium',
      })
      await aff.approve(a.accountId, ids.paid)
      paymentId = (await aff.payOut(a.accountId, 'AFF-2026-0001', 'SB-2026-0001'))!
      clock.advance(60_000)
      ids.approved = await aff.addCommission(a.accountId, { orderNr: 880002, saleCents: 1000, commissionCents: 100 })
      await aff.approve(a.accountId, ids.approved)
      clock.advance(60_000)
      ids.rejected = await aff.addCommission(a.accountId, {
        orderNr: 990003,
        subId: 'newsletter',
        saleCents: 2000,
        commissionCents: 200,
      })
      await aff.reject(a.accountId, ids.rejected, 'The order was refunded')
      clock.advance(60_000)
      ids.pending = await aff.addCommission(a.accountId, { orderNr: 990004, saleCents: 3000, commissionCents: 300 })
    })
    after(() => t.close())

    it("lists commissions newest first with the spec's fields and types", async () => {
      const r = await t.request('GET', '/affiliate/commissions/', { key: a.key })
      assert.equal(r.status, 200)
      const rows = r.body.data.commissions
      assert.deepEqual(
        rows.map((c: { id: number }) => c.id),
        [ids.pending, ids.rejected, ids.approved, ids.paid],
      )
      assert.deepEqual(r.body.data.pagination, { page: 1, limit: 25, total: 4, total_pages: 1 })
      const paid = rows[3]
      assert.deepEqual(Object.keys(paid).sort(), [
        'approved',
        'commission_amount',
        'date',
        'id',
        'order_nr',
        'paidout',
        'payment_id',
        'sale_amount',
        'sub_id',
      ])
      assert.match(paid.date, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      assert.deepEqual(
        { ...paid, date: undefined },
        {
          id: ids.paid,
          date: undefined,
          order_nr: 880001,
          sub_id: 'blog',
          sale_amount: 59.88,
          commission_amount: 5.99,
          approved: 1,
          paidout: 1,
          payment_id: paymentId,
        },
      )
      const approved = rows[2]
      assert.equal(approved.approved, 1)
      assert.equal(approved.paidout, 0)
      assert.equal(approved.payment_id, null)
      assert.equal(approved.sub_id, '')
      assert.equal(typeof approved.approved, 'number')
    })

    it('gives the full record, with rejection_reason only when not approved', async () => {
      const rejected = (await t.request('GET', `/affiliate/commissions/${ids.rejected}`, { key: a.key })).body.data
      assert.equal(rejected.approved, 0)
      assert.equal(rejected.status, 'rejected')
      assert.equal(rejected.rejection_reason, 'The order was refunded')
      const pending = (await t.request('GET', `/affiliate/commissions/${ids.pending}`, { key: a.key })).body.data
      assert.equal(pending.status, 'pending')
      assert.ok('rejection_reason' in pending)
      assert.equal(pending.rejection_reason, null)
      const paid = (await t.request('GET', `/affiliate/commissions/${ids.paid}`, { key: a.key })).body.data
      assert.equal(paid.status, 'paid')
      assert.equal(paid.description, 'VPS Medium')
      assert.ok(!('rejection_reason' in paid))
    })

    it('searches on order number and sub-id, pages, and refuses a page past the end', async () => {
      const byOrder = await t.request('GET', '/affiliate/commissions?search=9900', { key: a.key })
      assert.deepEqual(
        byOrder.body.data.commissions.map((c: { id: number }) => c.id),
        [ids.pending, ids.rejected],
      )
      const bySub = await t.request('GET', '/affiliate/commissions?search=NEWS', { key: a.key })
      assert.deepEqual(
        bySub.body.data.commissions.map((c: { id: number }) => c.id),
        [ids.rejected],
      )
      const p2 = await t.request('GET', '/affiliate/commissions?limit=3&page=2', { key: a.key })
      assert.deepEqual(
        p2.body.data.commissions.map((c: { id: number }) => c.id),
        [ids.paid],
      )
      assert.deepEqual((await t.request('GET', '/affiliate/commissions?limit=3&page=3', { key: a.key })).body, {
        status: 400,
        status_description: 'Page out of range',
      })
      assert.equal((await t.request('GET', '/affiliate/commissions?page=0', { key: a.key })).status, 400)
    })

    it('lists and shows payments with the commissions they paid', async () => {
      const list = await t.request('GET', '/affiliate/payments', { key: a.key })
      assert.equal(list.status, 200)
      assert.equal(list.body.data.payments.length, 1)
      const p = list.body.data.payments[0]
      assert.deepEqual(
        { ...p, date: undefined },
        {
          id: paymentId,
          date: undefined,
          amount: 5.99,
          method: 'bank_transfer',
          reference: 'AFF-2026-0001',
          status: 'paid',
          invoice_nr: 'SB-2026-0001',
          commission_count: 1,
        },
      )
      assert.match(p.date, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      const d = await t.request('GET', `/affiliate/payments/${paymentId}`, { key: a.key })
      assert.deepEqual(
        d.body.data.commissions.map((c: { id: number }) => c.id),
        [ids.paid],
      )
      assert.equal(
        (await t.request('GET', '/affiliate/payments?search=0001', { key: a.key })).body.data.pagination.total,
        1,
      )
      assert.equal(
        (await t.request('GET', '/affiliate/payments?search=nothing', { key: a.key })).body.data.pagination.total,
        0,
      )
      const byInvoice = await t.request('GET', '/affiliate/payments?search=sb-2026', { key: a.key })
      assert.deepEqual(
        byInvoice.body.data.payments.map((x: { id: number }) => x.id),
        [paymentId],
        'search matches the invoice number too',
      )
      const byId = await t.request('GET', `/affiliate/payments?search=${paymentId}`, { key: a.key })
      assert.ok(byId.body.data.payments.some((x: { id: number }) => x.id === paymentId))
    })

    it('pays out only approved commissions, once', async () => {
      const second = await t.ctx.services.affiliate.payOut(a.accountId, 'AFF-2026-0002')
      assert.ok(second)
      const d = (await t.request('GET', `/affiliate/payments/${second}`, { key: a.key })).body.data
      assert.deepEqual(
        d.commissions.map((c: { id: number }) => c.id),
        [ids.approved],
      )
      assert.equal(d.amount, 1)
      assert.equal(d.invoice_nr, null, 'no invoice named')
      assert.equal(await t.ctx.services.affiliate.payOut(a.accountId, 'AFF-2026-0003'), null)
      const pending = (await t.request('GET', `/affiliate/commissions/${ids.pending}`, { key: a.key })).body.data
      assert.equal(pending.paidout, 0)
    })

    it('pays each commission once when payouts race', async () => {
      const c = await t.account()
      const aff = t.ctx.services.affiliate
      for (let i = 0; i < 5; i++)
        await aff.approve(
          c.accountId,
          await aff.addCommission(c.accountId, { orderNr: 700 + i, saleCents: 1000, commissionCents: 100 }),
        )
      const ids = await Promise.all([1, 2, 3, 4].map((n) => aff.payOut(c.accountId, `RACE-${n}`)))
      const made = ids.filter((x) => x !== null)
      assert.equal(made.length, 1, 'one payout pays them all, the others find nothing left')
      const payments = (await t.request('GET', '/affiliate/payments', { key: c.key })).body.data.payments
      assert.equal(payments.length, 1)
      assert.equal(payments[0].amount, 5)
      assert.equal(payments[0].commission_count, 5)
    })

    it("answers 404 for missing and another account's commissions and payments; needs account-affiliate", async () => {
      const b = await t.account()
      for (const p of [`/affiliate/commissions/${ids.paid}`, '/affiliate/commissions/999999']) {
        assert.deepEqual((await t.request('GET', p, { key: b.key })).body, {
          status: 404,
          status_description: 'Commission not found',
        })
      }
      for (const p of [`/affiliate/payments/${paymentId}`, '/affiliate/payments/999999']) {
        assert.deepEqual((await t.request('GET', p, { key: b.key })).body, {
          status: 404,
          status_description: 'Payment not found',
        })
      }
      assert.deepEqual((await t.request('GET', '/affiliate/commissions', { key: b.key })).body.data.commissions, [])
      const sub = await t.subUser(a, { 'account-affiliate': true })
      assert.equal((await t.request('GET', '/affiliate/payments', { key: sub.key })).status, 200)
      const other = await t.subUser(a, { account: true })
      assert.deepEqual((await t.request('GET', '/affiliate/commissions', { key: other.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
    })
  })
})
