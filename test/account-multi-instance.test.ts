import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, type TestAccount, type TestApp } from './helpers/app.js'
import { twoInstances } from './helpers/instances.js'
import type { OutboxMailDriver } from '../src/drivers/mail/builtin.js'

describeWithEnv(['HOSTAPI_TEST_PG_URL'], 'account area on two instances sharing PostgreSQL', () => {
  let one: TestApp
  let two: TestApp
  let a: TestAccount
  let close: () => Promise<void>
  before(async () => {
    ;({ one, two, close } = await twoInstances({ env: { HOSTAPI_AUTH_CACHE_MS: '0' } }))
    a = await one.account()
  })
  after(() => close())

  it('keep the limit of 10 new users per hour across instances', async () => {
    const answers = await Promise.all(
      Array.from({ length: 14 }, (_, i) =>
        (i % 2 ? two : one).request('POST', '/account/users', {
          key: a.key,
          body: {
            email: `multi${i}-${Date.now()}@example.com`,
            firstname: 'M',
            lastname: String(i),
            password: 'a long enough password',
          },
        }),
      ),
    )
    assert.equal(answers.filter((r) => r.status === 200).length, 10)
    assert.equal(answers.filter((r) => r.status === 429).length, 4)
    assert.equal((await two.request('GET', '/account/users', { key: a.key })).body.data.pagination.total, 11)
  })

  it("apply a permission change made on one instance to the user's key on the other at once (no auth cache)", async () => {
    const b = await one.account()
    const sub = await one.subUser(b, { 'account-tickets': true })
    assert.equal((await two.request('GET', '/account/invoices', { key: sub.key })).status, 403)
    const put = await one.request('PUT', `/account/users/${sub.userId}`, {
      key: b.key,
      body: { permissions: { 'account-invoices': true } },
    })
    assert.equal(put.status, 200)
    assert.equal((await two.request('GET', '/account/invoices', { key: sub.key })).status, 200)
    assert.equal((await two.request('GET', '/account/tickets', { key: sub.key })).status, 403)
  })

  it('deliver each queued mail once when both instances run jobs', async () => {
    const c = await one.account()
    for (let i = 0; i < 6; i++) {
      await (i % 2 ? two : one).request('POST', '/account/tickets', {
        key: c.key,
        body: { subject: `Multi ${i}`, message: 'x', department: 'support' },
      })
    }
    await Promise.all([one.ctx.jobs.drain(), two.ctx.jobs.drain()])
    const outbox = one.ctx.drivers.mail as OutboxMailDriver
    const toDesk = (await outbox.list({ to: one.config.mail.supportAddress, limit: 500 })).filter(
      (m) => m.account_id === c.accountId,
    )
    assert.equal(toDesk.length, 6)
    assert.equal(new Set(toDesk.map((m) => m.subject)).size, 6)
  })
})
