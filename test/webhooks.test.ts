import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { ManualClock } from '../src/clock.js'
import type { OutboxMailDriver } from '../src/drivers/mail/builtin.js'
import { RETRY_SCHEDULE_MS } from '../src/modules/webhooks/webhook-deliverer.js'
import { forEachDialect, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { startReceiver, type Received, type Receiver } from './helpers/webhook-receiver.js'

/** Checks a request's signature with the standardwebhooks library and returns the verified payload. */
// biome-ignore lint/suspicious/noExplicitAny: the payload is read field by field
const verified = (secret: string, r: Received): any => new Webhook(secret).verify(r.body, r.headers)

// Endpoints, signed deliveries, retries and secrets; private receivers and the operator: webhooks-receivers.
forEachDialect((dialect) => {
  describe(`webhooks (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let receiver: Receiver
    let dir: string
    const clock = new ManualClock()

    before(async () => {
      dir = tempDir()
      receiver = await startReceiver(dir)
      t = await startTestApp(dialect, {
        clock,
        env: {
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
          HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
          HOSTAPI_WEBHOOKS_MAX_ENDPOINTS: '8',
        },
      })
      a = await t.account('Hooks B.V.')
    })
    after(async () => {
      await t.close()
      await receiver.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    const create = async (path: string, events: string[] = ['*'], key = a.key) => {
      const res = await t.request('POST', '/account/webhooks', { key, body: { url: receiver.origin + path, events } })
      assert.equal(res.status, 200, res.text)
      return res.body.data as { id: number; secret: string }
    }
    const deliveries = async (id: number) =>
      (await t.request('GET', `/account/webhooks/${id}/deliveries`, { key: a.key })).body.data.deliveries

    it('creates, shows, lists, updates and deletes endpoints; the secret is shown once', async () => {
      const made = await create('/crud', ['dns.zone.changed', 'invoice.paid'])
      assert.match(made.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/)
      const got = await t.request('GET', `/account/webhooks/${made.id}`, { key: a.key })
      assert.equal(got.status, 200)
      assert.equal(got.body.data.secret, undefined)
      assert.deepEqual(got.body.data.events, ['dns.zone.changed', 'invoice.paid'])
      assert.equal(got.body.data.enabled, true)
      const stored = await t.ctx.db.selectFrom('webhook_endpoints').select('secret').where('id', '=', made.id).execute()
      assert.ok(!stored[0].secret.includes(made.secret.slice(6)), 'the secret is sealed at rest')
      const put = await t.request('PUT', `/account/webhooks/${made.id}`, {
        key: a.key,
        body: { description: 'Billing', enabled: false },
      })
      assert.equal(put.status, 200)
      assert.equal(put.body.data.description, 'Billing')
      assert.equal(put.body.data.enabled, false)
      const list = await t.request('GET', '/account/webhooks', { key: a.key })
      assert.ok(list.body.data.webhooks.some((w: { id: number }) => w.id === made.id))
      assert.equal((await t.request('DELETE', `/account/webhooks/${made.id}`, { key: a.key })).status, 200)
      const gone = await t.request('GET', `/account/webhooks/${made.id}`, { key: a.key })
      assert.deepEqual([gone.status, gone.body.status_description], [404, 'Webhook not found'])
    })

    it('refuses plain http, unknown events and more endpoints than the limit', async () => {
      const other = await t.account('Limits B.V.')
      const http = await t.request('POST', '/account/webhooks', {
        key: other.key,
        body: { url: 'http://hooks.example.nl/', events: ['*'] },
      })
      assert.deepEqual([http.status, http.body.status_description], [400, 'Invalid url: use https://'])
      const unknown = await t.request('POST', '/account/webhooks', {
        key: other.key,
        body: { url: 'https://hooks.example.nl/', events: ['no.such.event'] },
      })
      assert.equal(unknown.status, 400)
      for (let i = 0; i < 8; i++) await create(`/limit${i}`, ['*'], other.key)
      const over = await t.request('POST', '/account/webhooks', {
        key: other.key,
        body: { url: 'https://hooks.example.nl/', events: ['*'] },
      })
      assert.deepEqual(
        [over.status, over.body.status_description],
        [400, 'Too many webhook endpoints: at most 8 per account'],
      )
    })

    it('sends a signed test event that verifies with standardwebhooks', async () => {
      const hook = await create('/test')
      const queued = await t.request('POST', `/account/webhooks/${hook.id}/test`, { key: a.key })
      assert.equal(queued.status, 200)
      assert.equal(queued.body.data.status, 'pending')
      const before = receiver.received.length
      await t.ctx.jobs.drain()
      const [r] = (await receiver.waitFor(before + 1)).slice(before)
      assert.equal(r.path, '/test')
      assert.equal(r.headers['webhook-id'], queued.body.data.event_id)
      const payload = verified(hook.secret, r)
      assert.equal(payload.type, 'webhook.test')
      assert.equal(payload.data.account, a.customerNumber)
      assert.equal(payload.data.webhook_id, hook.id)
      const [d] = await deliveries(hook.id)
      assert.equal(d.status, 'succeeded')
      assert.equal(d.attempts, 1)
      assert.equal(d.response_status, 200)
      assert.equal(typeof d.duration_ms, 'number')
      assert.equal(d.next_attempt_at, null)
    })

    it('retries a receiver answering 500 twice on the backoff schedule, then succeeds', async () => {
      const hook = await create('/flaky')
      receiver.answer(500, 500)
      const before = receiver.received.length
      await t.request('POST', `/account/webhooks/${hook.id}/test`, { key: a.key })
      await t.ctx.jobs.drain()
      let [d] = await deliveries(hook.id)
      assert.deepEqual([d.status, d.attempts, d.response_status], ['pending', 1, 500])
      const gap = (x: { next_attempt_at: string; last_attempt_at: string }) =>
        Date.parse(x.next_attempt_at) - Date.parse(x.last_attempt_at)
      // The wait (±10 %) counts from the end of the attempt: the gap from its start holds the attempt's own time too
      // (its duration, and the bookkeeping after the answer, a few ms; 100 ms allowed for a busy machine).
      const waitOk = (x: { next_attempt_at: string; last_attempt_at: string; duration_ms: number }, ms: number) =>
        gap(x) >= ms * 0.9 - 1 && gap(x) - x.duration_ms <= ms * 1.1 + 100
      assert.ok(waitOk(d, RETRY_SCHEDULE_MS[0]), `first wait ${gap(d)}, attempt ${d.duration_ms} ms`)
      // Not due yet: nothing is sent.
      await t.ctx.jobs.drain()
      assert.equal(receiver.received.length, before + 1)
      clock.advance(gap(d) + 1)
      await t.ctx.jobs.drain()
      ;[d] = await deliveries(hook.id)
      assert.deepEqual([d.status, d.attempts, d.response_status], ['pending', 2, 500])
      assert.ok(waitOk(d, RETRY_SCHEDULE_MS[1]), `second wait ${gap(d)}, attempt ${d.duration_ms} ms`)
      clock.advance(gap(d) + 1)
      await t.ctx.jobs.drain()
      ;[d] = await deliveries(hook.id)
      assert.deepEqual([d.status, d.attempts, d.response_status], ['succeeded', 3, 200])
      const got = receiver.received.slice(before)
      assert.equal(got.length, 3)
      assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id on every attempt')
      for (const r of got) assert.equal(verified(hook.secret, r).type, 'webhook.test')
    })

    it('does not follow redirects', async () => {
      const hook = await create('/moved')
      receiver.answer(302)
      const before = receiver.received.length
      await t.request('POST', `/account/webhooks/${hook.id}/test`, { key: a.key })
      await t.ctx.jobs.drain()
      const [d] = await deliveries(hook.id)
      assert.deepEqual([d.status, d.response_status, d.last_error], ['pending', 302, 'The receiver answered 302'])
      assert.deepEqual(
        receiver.received.slice(before).map((r) => r.path),
        ['/moved'],
      )
      // Its retries would take answers meant for the endpoints of the next tests.
      await t.request('DELETE', `/account/webhooks/${hook.id}`, { key: a.key })
    })

    it('signs with the old and the new secret for 24 hours after a rotation', async () => {
      const hook = await create('/rotate')
      const rotated = await t.request('POST', `/account/webhooks/${hook.id}/rotate-secret`, { key: a.key })
      assert.equal(rotated.status, 200)
      const fresh = rotated.body.data.secret as string
      assert.notEqual(fresh, hook.secret)
      let before = receiver.received.length
      await t.request('POST', `/account/webhooks/${hook.id}/test`, { key: a.key })
      await t.ctx.jobs.drain()
      let [r] = (await receiver.waitFor(before + 1)).slice(before)
      assert.equal(r.headers['webhook-signature'].split(' ').length, 2)
      assert.equal(verified(hook.secret, r).type, 'webhook.test')
      assert.equal(verified(fresh, r).type, 'webhook.test')
      clock.advance(24 * 3600_000 + 1000)
      before = receiver.received.length
      await t.request('POST', `/account/webhooks/${hook.id}/test`, { key: a.key })
      await t.ctx.jobs.drain()
      ;[r] = (await receiver.waitFor(before + 1)).slice(before)
      // The library's verify refuses a timestamp a day from the real time: the signature is compared with its sign.
      const at = new Date(Number(r.headers['webhook-timestamp']) * 1000)
      const id = r.headers['webhook-id']
      assert.equal(r.headers['webhook-signature'], new Webhook(fresh).sign(id, at, r.body))
      assert.notEqual(r.headers['webhook-signature'], new Webhook(hook.secret).sign(id, at, r.body))
    })

    it('redelivers a delivery with the same webhook-id', async () => {
      const hook = await create('/again')
      await t.request('POST', `/account/webhooks/${hook.id}/test`, { key: a.key })
      await t.ctx.jobs.drain()
      const [first] = await deliveries(hook.id)
      const res = await t.request('POST', `/account/webhooks/${hook.id}/deliveries/${first.id}/redeliver`, {
        key: a.key,
      })
      assert.equal(res.status, 200)
      assert.equal(res.body.data.event_id, first.event_id)
      assert.notEqual(res.body.data.id, first.id)
      const before = receiver.received.length
      await t.ctx.jobs.drain()
      const [r] = (await receiver.waitFor(before + 1)).slice(before)
      assert.equal(r.headers['webhook-id'], first.event_id)
      const missing = await t.request('POST', `/account/webhooks/${hook.id}/deliveries/999999/redeliver`, {
        key: a.key,
      })
      assert.deepEqual([missing.status, missing.body.status_description], [404, 'Delivery not found'])
    })

    it('disables an endpoint whose deliveries fail for three days and mails the main user', async () => {
      const hook = await create('/down')
      receiver.answer(...RETRY_SCHEDULE_MS.map(() => 503), 503)
      await t.request('POST', `/account/webhooks/${hook.id}/test`, { key: a.key })
      await t.ctx.jobs.drain()
      for (const wait of RETRY_SCHEDULE_MS) {
        clock.advance(wait * 1.1 + 1000)
        await t.ctx.jobs.drain()
      }
      const [d] = await deliveries(hook.id)
      assert.deepEqual([d.status, d.attempts], ['failed', RETRY_SCHEDULE_MS.length + 1])
      const got = (await t.request('GET', `/account/webhooks/${hook.id}`, { key: a.key })).body.data
      assert.equal(got.enabled, false)
      assert.match(got.disabled_reason, /^Every delivery failed since /)
      await t.ctx.jobs.drain()
      const owner = await t.ctx.db.selectFrom('users').select('email').where('id', '=', a.userId).executeTakeFirst()
      const mails = await (t.ctx.drivers.mail as OutboxMailDriver).list({ to: owner!.email })
      assert.ok(mails.some((m) => m.subject === `Webhook endpoint ${hook.id} was disabled`))
    })
    it('fails the pending deliveries of a disabled endpoint; prunes finished ones after 30 days', async () => {
      const other = await t.account('Disabling B.V.')
      const created = await create('/off', ['invoice.issued'], other.key)
      receiver.answer(500)
      const before = receiver.received.length
      await t.ctx.services.invoices.create(other.accountId, { lines: [{ description: 'Hosting', amountCents: 500 }] })
      await t.ctx.jobs.drain()
      const list = async () =>
        (await t.request('GET', `/account/webhooks/${created.id}/deliveries`, { key: other.key })).body.data.deliveries
      let [d] = await list()
      assert.deepEqual([d.event_type, d.status, d.response_status], ['invoice.issued', 'pending', 500])
      const off = await t.request('PUT', `/account/webhooks/${created.id}`, {
        key: other.key,
        body: { enabled: false },
      })
      assert.equal(off.status, 200)
      clock.advance(RETRY_SCHEDULE_MS[0] * 1.1 + 1000)
      await t.ctx.jobs.drain()
      ;[d] = await list()
      assert.deepEqual([d.status, d.attempts, d.last_error], ['failed', 1, 'The endpoint is disabled'])
      assert.equal(receiver.received.length, before + 1)

      clock.advance(31 * 24 * 3600_000)
      await t.ctx.services.webhooks.scans.scheduleScan()
      await t.ctx.jobs.drain()
      assert.deepEqual(await list(), [])
    })
  })
})
