import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import { PERMISSIONS, type Permission } from '../src/modules/iam/permissions.js'
import { EVENT_TYPES } from '../src/modules/webhooks/webhook-events.js'
import { forEachDialect, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { CAUSE_ENV, EVENT_CAUSES } from './helpers/event-causes.js'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js'

// Generated over EVENT_TYPES and the permission areas: for each area a sub-user holding it (and `account-api`, to
// manage webhooks) registers a `*` endpoint; each event is caused once, and each endpoint must receive it exactly
// when its owner may read what it tells, as the API itself answers: the read path of the event with the owner's key.

forEachDialect((dialect) => {
  describe(`webhook events follow the endpoint owner's permissions (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let receiver: Receiver
    let dir: string
    const clock = new ManualClock()
    const subs = new Map<Permission, { userId: number; key: string }>()

    before(async () => {
      dir = tempDir()
      receiver = await startReceiver(dir)
      t = await startTestApp(dialect, {
        clock,
        env: {
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
          HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
          HOSTAPI_WEBHOOKS_MAX_ENDPOINTS: String(PERMISSIONS.length + 4),
          ...CAUSE_ENV,
        },
      })
      a = await t.account('Permissions B.V.')
      const main = await t.request('POST', '/account/webhooks', {
        key: a.key,
        body: { url: `${receiver.origin}/main`, events: ['*'] },
      })
      assert.equal(main.status, 200, main.text)
      for (const area of PERMISSIONS) {
        const sub = await t.subUser(a, { 'account-api': true, [area]: true })
        subs.set(area, sub)
        const res = await t.request('POST', '/account/webhooks', {
          key: sub.key,
          body: { url: `${receiver.origin}/sub/${area}`, events: ['*'] },
        })
        assert.equal(res.status, 200, res.text)
      }
    })
    after(async () => {
      await t?.close()
      await receiver?.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    const drain = async () => {
      for (let i = 0; i < 5; i++) await t.ctx.jobs.drain()
    }

    for (const type of Object.keys(EVENT_CAUSES) as (typeof EVENT_TYPES)[number][]) {
      it(`${type}: delivered to an endpoint iff its owner may read it`, async () => {
        const from = receiver.received.length
        const caused = await EVENT_CAUSES[type]({ t, a, clock })
        await drain()
        const got = (path: string) =>
          receiver.received
            .slice(from)
            .filter((r) => r.path === path)
            .map((r) => JSON.parse(r.body))
            .some((e) => e.type === type && caused.matches(e.data))
        assert.ok(got('/main'), `the main user's endpoint receives ${type}`)
        const wrong: string[] = []
        for (const [area, sub] of subs) {
          const read = await t.request('GET', caused.read, { key: sub.key })
          if (got(`/sub/${area}`) !== (read.status === 200))
            wrong.push(`${area}: reads ${caused.read} → ${read.status}, received: ${got(`/sub/${area}`)}`)
        }
        assert.deepEqual(wrong, [], `${type}`)
      })
    }

    /** A new endpoint of `key`'s user at `path` of the receiver, listening to `events`. */
    const endpoint = async (key: string, path: string, events = ['*']) => {
      const res = await t.request('POST', '/account/webhooks', {
        key,
        body: { url: `${receiver.origin}${path}`, events },
      })
      assert.equal(res.status, 200, res.text)
      return res.body.data.id as number
    }
    const deliveries = async (key: string, id: number) =>
      (await t.request('GET', `/account/webhooks/${id}/deliveries`, { key })).body.data.deliveries as {
        event_type: string
        status: string
        last_error: string | null
      }[]
    const issueInvoice = () =>
      t.ctx.services.invoices.create(a.accountId, { lines: [{ description: 'Hosting', amountCents: 1000 }] })

    it('refuses to subscribe a sub-user to an event it may not read, in POST and PUT', async () => {
      const sub = await t.subUser(a, { 'account-api': true })
      const refused = await t.request('POST', '/account/webhooks', {
        key: sub.key,
        body: { url: `${receiver.origin}/refused`, events: ['vps.task.completed', 'invoice.paid'] },
      })
      assert.deepEqual(refused.body, {
        status: 400,
        status_description: 'Invalid events: vps.task.completed needs the vps permission',
        errors: [{ field: 'events', message: 'vps.task.completed needs the vps permission' }],
      })
      const id = await endpoint(sub.key, '/refused')
      const put = await t.request('PUT', `/account/webhooks/${id}`, {
        key: sub.key,
        body: { events: ['invoice.paid'] },
      })
      assert.deepEqual(put.body, {
        status: 400,
        status_description: 'Invalid events: invoice.paid needs the account-invoices permission',
        errors: [{ field: 'events', message: 'invoice.paid needs the account-invoices permission' }],
      })
      const reader = await t.subUser(a, { 'account-api': true, 'account-invoices': true })
      await endpoint(reader.key, '/allowed', ['invoice.paid', 'invoice.issued'])
      await t.request('DELETE', `/account/webhooks/${id}`, { key: sub.key })
    })

    it('stops the events when a permission is removed, also those already queued', async () => {
      const sub = await t.subUser(a, { 'account-api': true, 'account-invoices': true })
      const id = await endpoint(sub.key, '/revoked')
      const from = receiver.received.length
      await issueInvoice()
      const revoke = await t.request('PUT', `/account/users/${sub.userId}`, {
        key: a.key,
        body: { permissions: { 'account-api': true } },
      })
      assert.equal(revoke.status, 200, revoke.text)
      await drain()
      assert.deepEqual(
        (await deliveries(sub.key, id)).map((d) => [d.event_type, d.status, d.last_error]),
        [['invoice.issued', 'failed', "The endpoint's owner may not read this event"]],
      )
      await issueInvoice()
      await drain()
      assert.equal((await deliveries(sub.key, id)).length, 1, 'no delivery of the later event')
      assert.deepEqual(
        receiver.received.slice(from).filter((r) => r.path === '/revoked'),
        [],
      )
      await t.request('DELETE', `/account/webhooks/${id}`, { key: sub.key })
    })

    it("makes the user who sets another user's endpoint's url its owner", async () => {
      const id = await endpoint(a.key, '/main-only')
      const sub = await t.subUser(a, { 'account-api': true })
      const put = await t.request('PUT', `/account/webhooks/${id}`, {
        key: sub.key,
        body: { url: `${receiver.origin}/taken` },
      })
      assert.equal(put.status, 200, put.text)
      const from = receiver.received.length
      await issueInvoice()
      await drain()
      assert.deepEqual(await deliveries(sub.key, id), [])
      assert.deepEqual(
        receiver.received.slice(from).filter((r) => r.path === '/taken'),
        [],
      )
      await t.request('DELETE', `/account/webhooks/${id}`, { key: a.key })
    })

    it('sends ticket.replied to the sub-user who opened the ticket', async () => {
      const sub = await t.subUser(a, { 'account-api': true, 'account-tickets': true })
      const id = await endpoint(sub.key, '/own-tickets')
      const opened = await t.request('POST', '/account/tickets', {
        key: sub.key,
        body: { subject: 'Mine', message: 'Hello', department: 'support' },
      })
      assert.equal(opened.status, 200, opened.text)
      const n = opened.body.data.ticket_number
      const from = receiver.received.length
      await t.ctx.services.tickets.supportReply(n, { author: 'Support', message: 'Hi' })
      await drain()
      const got = receiver.received
        .slice(from)
        .filter((r) => r.path === '/own-tickets')
        .map((r) => JSON.parse(r.body))
      assert.deepEqual(
        got.map((e) => [e.type, e.data.ticket_number]),
        [['ticket.replied', n]],
      )
      await t.request('DELETE', `/account/webhooks/${id}`, { key: sub.key })
    })

    it('covers every event type', () => {
      assert.deepEqual(Object.keys(EVENT_CAUSES).sort(), [...EVENT_TYPES].sort())
    })
  })
})
