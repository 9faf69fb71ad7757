import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { describeWithEnv, forEachDialect, rawRows, startTestApp, tempDir, type TestApp } from './helpers/app.js'
import { twoInstances } from './helpers/instances.js'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js'
import { eventually } from './helpers/wait.js'

// Deliveries as the job runner makes them, with the runner started: concurrency per endpoint, receivers that do
// not wait on each other, and several instances on one database.

forEachDialect((dialect) => {
  describe(`webhook delivery with the job runner (${dialect})`, () => {
    let t: TestApp
    let dir: string
    let slow: Receiver
    let fast: Receiver

    before(async () => {
      dir = tempDir()
      slow = await startReceiver(dir)
      fast = await startReceiver(dir, { key: `${dir}/smtp-key.pem`, cert: slow.caFile })
      t = await startTestApp(dialect, {
        env: {
          HOSTAPI_JOBS: '1',
          HOSTAPI_JOB_POLL_MS: '20',
          HOSTAPI_JOB_CONCURRENCY: '4',
          HOSTAPI_WEBHOOKS_ENDPOINT_CONCURRENCY: '2',
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
          HOSTAPI_WEBHOOKS_CA_FILE: slow.caFile,
        },
      })
    })
    after(async () => {
      await t.close()
      await slow.close()
      await fast.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it('bounds the attempts in flight per endpoint, and a slow receiver does not delay another', async () => {
      const a = await t.account('Slow B.V.')
      const create = async (r: Receiver) =>
        (await t.ctx.services.webhooks.create(a, { url: `${r.origin}/hook`, events: ['*'] })).id
      const [slowId, fastId] = [await create(slow), await create(fast)]
      slow.delayMs = 1500
      for (let i = 0; i < 5; i++) await t.ctx.services.webhooks.sendTest(a.accountId, slowId)
      await slow.waitFor(1)
      const sent = Date.now()
      await t.ctx.services.webhooks.sendTest(a.accountId, fastId)
      const [r] = await fast.waitFor(1, 5000)
      assert.ok(r.at - sent < 1000, `the fast receiver waited ${r.at - sent} ms`)
      await slow.waitFor(5, 20_000)
      assert.equal(slow.maxInFlight, 2)
    })
  })
})

describeWithEnv(['HOSTAPI_TEST_PG_URL'], 'webhooks on two instances (postgres)', () => {
  it('delivers each event once though both instances run the delivery jobs', async () => {
    const dir = tempDir()
    const receiver = await startReceiver(dir)
    const apps = await twoInstances({
      env: {
        HOSTAPI_JOBS: '1',
        HOSTAPI_JOB_POLL_MS: '20',
        HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
        HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
      },
    })
    try {
      const a = await apps.one.account('Two Instances B.V.')
      const hook = await apps.one.request('POST', '/account/webhooks', {
        key: a.key,
        body: { url: `${receiver.origin}/both`, events: ['*'] },
      })
      assert.equal(hook.status, 200, hook.text)
      const n = 20
      for (let i = 0; i < n; i++) {
        const app = i % 2 ? apps.one : apps.two
        const res = await app.request('POST', `/account/webhooks/${hook.body.data.id}/test`, { key: a.key })
        assert.equal(res.status, 200, res.text)
      }
      await receiver.waitFor(n, 20_000)
      // Once no delivery job is queued or running, no second delivery of any of them can follow.
      await eventually(
        async () =>
          (
            await rawRows(
              apps.one.config.database,
              "select id from jobs where kind = 'webhooks.deliver' and status in ('queued', 'running')",
            )
          ).length === 0,
        { what: 'every delivery job has ended', timeoutMs: 20_000 },
      )
      const ids = receiver.received.map((r) => r.headers['webhook-id'])
      assert.equal(ids.length, n)
      assert.equal(new Set(ids).size, n)
      for (const r of receiver.received) new Webhook(hook.body.data.secret).verify(r.body, r.headers)
    } finally {
      await apps.close()
      await receiver.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
