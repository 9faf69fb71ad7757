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
          HOSTAPI_WEBHOOKS_MAX_ENDPOINTS: String(PERMISSIONS.length + 1),
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

    it('covers every event type', () => {
      assert.deepEqual(Object.keys(EVENT_CAUSES).sort(), [...EVENT_TYPES].sort())
    })
  })
})
