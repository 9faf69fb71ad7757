import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { iso, ManualClock } from '../src/clock.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { consistently } from './helpers/wait.js'

// Addresses a connection to fails at once, inside connect(): a link-local IPv6 address without a scope (EINVAL)
// and the broadcast address, which has no route for TCP (ENETUNREACH).
const UNCONNECTABLE = [
  { address: 'fe80::1', family: 6, code: 'EINVAL' },
  { address: '255.255.255.255', family: 4, code: 'ENETUNREACH' },
]

// A receiver whose address cannot be connected to fails that attempt only: the server stays up, the delivery is
// retried later, and is never left `sending`.
forEachDialect((dialect) => {
  describe(`webhook receivers that cannot be connected to (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    const clock = new ManualClock()

    before(async () => {
      t = await startTestApp(dialect, {
        clock,
        env: { HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1', HOSTAPI_WEBHOOKS_ALLOW_HTTP: '1' },
      })
      a = await t.account('Unreachable B.V.')
    })
    after(() => t.close())

    for (const scheme of ['http', 'https']) {
      for (const { address, family, code } of UNCONNECTABLE) {
        it(`fails and retries a delivery to a ${scheme} receiver resolving to ${address}`, async () => {
          const host = `hooks-${scheme}-${family}.example.nl`
          t.ctx.services.webhooks.deliverer.setResolver(async () => [{ address, family }])
          const hook = await t.request('POST', '/account/webhooks', {
            key: a.key,
            body: { url: `${scheme}://${host}:8443/hook`, events: ['*'] },
          })
          assert.equal(hook.status, 200, hook.text)
          const sent = await t.request('POST', `/account/webhooks/${hook.body.data.id}/test`, { key: a.key })
          assert.equal(sent.status, 200, sent.text)
          await t.ctx.jobs.drain()
          // Whatever the failed connection left behind runs meanwhile: an unhandled error would end the process.
          await consistently(async () => (await t.request('GET', '/whoami', { key: a.key })).status === 200, {
            what: 'the server keeps answering',
            forMs: 100,
          })

          const list = await t.request('GET', `/account/webhooks/${hook.body.data.id}/deliveries`, { key: a.key })
          assert.equal(list.status, 200, 'the server still answers')
          const [d] = list.body.data.deliveries
          assert.equal(d.status, 'pending')
          assert.equal(d.attempts, 1)
          // The customer sees the class of failure; the operator's detail names the address and the error.
          assert.equal(d.last_error, 'The receiver could not be reached')
          const { error_detail } = await t.ctx.db
            .selectFrom('webhook_deliveries')
            .select('error_detail')
            .where('id', '=', d.id)
            .executeTakeFirstOrThrow()
          assert.match(
            error_detail ?? '',
            new RegExp(`^Connection to ${address.replace(/\./g, '\\.')} failed: .*${code}`),
          )
          assert.ok(d.next_attempt_at > clock.now().toISOString(), 'the next attempt is scheduled')
          const retry = await t.ctx.db
            .selectFrom('jobs')
            .select(['payload', 'run_at'])
            .where('kind', '=', 'webhooks.deliver')
            .where('status', '=', 'queued')
            .execute()
          assert.ok(
            retry.some((j) => JSON.parse(j.payload).deliveryId === d.id),
            'a job for the next attempt is queued',
          )
        })
      }
    }

    it('fails a delivery whose job was quarantined instead of leaving it sending', async () => {
      t.ctx.services.webhooks.deliverer.setResolver(async () => [{ address: '127.0.0.1', family: 4 }])
      const hook = await t.request('POST', '/account/webhooks', {
        key: a.key,
        body: { url: 'http://killer.example.nl:9/hook', events: ['*'] },
      })
      const sent = await t.request('POST', `/account/webhooks/${hook.body.data.id}/test`, { key: a.key })
      const deliveryId = sent.body.data.id
      // What a process killed during the second attempt leaves: the job running with its lease run out (one death
      // counted already), the delivery sending.
      const past = iso(new Date(Date.now() - 1))
      const jobs = await t.ctx.db
        .updateTable('jobs')
        .set({ status: 'running', attempts: 2, crashes: 1, locked_by: 'dead-worker', locked_until: past })
        .where('kind', '=', 'webhooks.deliver')
        .where('payload', '=', JSON.stringify({ deliveryId }))
        .executeTakeFirst()
      assert.equal(Number(jobs.numUpdatedRows), 1)
      await t.ctx.db
        .updateTable('webhook_deliveries')
        .set({ status: 'sending', attempts: 2, locked_until: past })
        .where('id', '=', deliveryId)
        .execute()
      await t.ctx.jobs.drain()
      const list = await t.request('GET', `/account/webhooks/${hook.body.data.id}/deliveries`, { key: a.key })
      const [d] = list.body.data.deliveries
      assert.deepEqual([d.id, d.status, d.attempts], [deliveryId, 'failed', 2])
      assert.equal(d.last_error, 'Not sent again: the process sending it died during two attempts')
      const job = await t.ctx.db
        .selectFrom('jobs')
        .select(['status', 'crashes', 'last_error'])
        .where('payload', '=', JSON.stringify({ deliveryId }))
        .executeTakeFirstOrThrow()
      assert.deepEqual([job.status, job.crashes], ['failed', 2])
      assert.match(job.last_error ?? '', /^quarantined: /)
    })
  })
})
