import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { eventually } from './helpers/wait.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js'

// Receivers that never answer hold delivery attempts for the whole test (the attempt timeout is a minute): what
// else must go on meanwhile is checked to finish while every one of those attempts is still unanswered.

const ACCOUNT_SHARE = 2

forEachDialect((dialect) => {
  describe(`webhook deliveries in their own lane (${dialect})`, () => {
    let t: TestApp
    let dir: string
    let hanging: Receiver
    let fast: Receiver
    let a: TestAccount

    before(async () => {
      dir = tempDir()
      hanging = await startReceiver(dir)
      fast = await startReceiver(dir, { key: `${dir}/smtp-key.pem`, cert: hanging.caFile })
      hanging.hang = true
      t = await startTestApp(dialect, {
        env: {
          HOSTAPI_JOBS: '1',
          HOSTAPI_JOB_POLL_MS: '20',
          HOSTAPI_JOB_CONCURRENCY: '2',
          HOSTAPI_WEBHOOKS_CONCURRENCY: '4',
          HOSTAPI_WEBHOOKS_ACCOUNT_CONCURRENCY: String(ACCOUNT_SHARE),
          HOSTAPI_WEBHOOKS_ENDPOINT_CONCURRENCY: '2',
          HOSTAPI_WEBHOOKS_TIMEOUT_MS: '60000',
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
          HOSTAPI_WEBHOOKS_CA_FILE: hanging.caFile,
        },
      })
      // Account A: three endpoints that never answer, two test events to each.
      a = await t.account('Hanging B.V.')
      const ids: number[] = []
      for (const path of ['/a1', '/a2', '/a3'])
        ids.push((await t.ctx.services.webhooks.create(a, { url: hanging.origin + path, events: ['*'] })).id)
      for (let i = 0; i < 2; i++) for (const id of ids) await t.ctx.services.webhooks.sendTest(a.accountId, id)
      await hanging.waitFor(ACCOUNT_SHARE)
    })
    after(async () => {
      // Closing the receiver first ends the hanging attempts, so the runner stops at once.
      await hanging.close()
      await t.close()
      await fast.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    /** Account A's deliveries by status (and parked), which shows none of its attempts has ended. */
    const stateOfA = async () => {
      const rows = await t.ctx.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'parked', 'attempts'])
        .where('account_id', '=', a.accountId)
        .execute()
      return {
        sending: rows.filter((r) => r.status === 'sending').length,
        parked: rows.filter((r) => r.status === 'pending' && r.parked === 1 && r.attempts === 0).length,
        total: rows.length,
      }
    }

    it('holds at most the account share of attempts in flight, the rest parked', async () => {
      await eventually(async () => (await stateOfA()).parked === 6 - ACCOUNT_SHARE, {
        what: 'the other attempts are parked',
        timeoutMs: 10_000,
      })
      assert.deepEqual(await stateOfA(), { sending: ACCOUNT_SHARE, parked: 6 - ACCOUNT_SHARE, total: 6 })
      assert.equal(hanging.received.length, ACCOUNT_SHARE)
    })

    it("finishes a VPS task while the account's receivers hang", async () => {
      const c = await t.account('Servers B.V.')
      const id = await makeVps(t, c)
      const running = async () =>
        (await t.ctx.db.selectFrom('vps').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status ===
        'running'
      await eventually(running, { what: 'the VPS runs', timeoutMs: 20_000 })
      assert.equal((await stateOfA()).sending, ACCOUNT_SHARE, 'an attempt of account A ended first')
      assert.equal(hanging.received.length, ACCOUNT_SHARE)
    })

    it("delivers another account's event to a fast receiver while the account's receivers hang", async () => {
      const b = await t.account('Fast B.V.')
      const hook = await t.ctx.services.webhooks.create(b, { url: `${fast.origin}/b`, events: ['*'] })
      await t.ctx.services.webhooks.sendTest(b.accountId, hook.id)
      const [r] = await fast.waitFor(1, 20_000)
      assert.equal(r.path, '/b')
      assert.equal((await stateOfA()).sending, ACCOUNT_SHARE, 'an attempt of account A ended first')
      assert.equal(hanging.received.length, ACCOUNT_SHARE)
    })
  })
})
