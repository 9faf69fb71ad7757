import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { Type } from 'typebox'
import { sql } from 'kysely'
import { ManualClock, iso } from '../src/clock.js'
import { defineJob } from '../src/jobs/runner.js'
import { insertOutboxMessage } from '../src/drivers/mail/outbox.repository.js'
import { ownTables } from '../src/db/database.js'
import { updateEndpoint } from '../src/modules/webhooks/webhooks.repository.js'
import { forEachDialect, type TestAccount, type TestApp, startTestApp } from './helpers/app.js'
import { OwnRedis } from './helpers/redis.js'
import { eventually } from './helpers/wait.js'

const VERSION = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version

/** The samples of a Prometheus text answer, by name and labels as written. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$/.exec(line)
    assert.ok(m, `not a sample line: ${line}`)
    out.set(m[1], Number(m[2]))
  }
  return out
}

forEachDialect((dialect) => {
  describe(`metrics for alerts (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let token: string
    const clock = new ManualClock()
    const scrape = async () => {
      const r = await t.request('GET', '/admin/v1/metrics', { headers: { authorization: `Bearer ${token}` } })
      assert.equal(r.status, 200, r.text)
      return samples(r.text)
    }
    before(async () => {
      t = await startTestApp(dialect, { clock })
      a = await t.account()
      token = (await t.ctx.services.admin.createToken()).token
    })
    after(() => t.close())

    it('shows the release in hostapi_build_info', async () => {
      assert.equal((await scrape()).get(`hostapi_build_info{version="${VERSION}"}`), 1)
    })

    it('counts only due work in hostapi_jobs_oldest_age_seconds, aged from when it became due', async () => {
      const kind = `test.due.${dialect}`
      const job = defineJob({ name: kind, payload: Type.Null(), handle: async () => null })
      t.ctx.jobs.register(job)
      const age = async () => (await scrape()).get(`hostapi_jobs_oldest_age_seconds{kind="${kind}",status="queued"}`)
      // A recurring job waiting for its next run, an hour away: queued, not due, however old it is.
      await t.ctx.jobs.enqueue(job, null, { trx: t.ctx.db, runAt: new Date(clock.now().getTime() + 3_600_000) })
      clock.advance(501_000)
      assert.equal((await scrape()).get(`hostapi_jobs{kind="${kind}",status="queued"}`), 1)
      assert.equal(await age(), undefined)
      // 30 s after its run time it is due and late by 30 s (not by the 3,630 s since it was queued).
      clock.advance(3_600_000 - 501_000 + 30_000)
      const late = await age()
      assert.ok(late !== undefined && late >= 30 && late < 40, `age ${late}`)
      // Once run, nothing is due.
      assert.equal(await t.ctx.jobs.drain(), 1)
      assert.equal(await age(), undefined)
    })

    it('counts refused mail in hostapi_mail_outbox_failed', async () => {
      const before = (await scrape()).get('hostapi_mail_outbox_failed')
      assert.equal(before, 0)
      const message = { to: 'ann@tenant-a.test', subject: 'Hello', text: 'Body', kind: 'test.mail' }
      for (const status of ['failed', 'sent', 'failed'] as const)
        await insertOutboxMessage(ownTables(t.ctx.db), message, {
          sender: 'hostapi@localhost.localdomain',
          createdAt: iso(clock.now()),
          status,
          statusDetail: status === 'failed' ? '550 5.1.1 No such user' : '250 Ok',
        })
      assert.equal((await scrape()).get('hostapi_mail_outbox_failed'), 2)
    })

    it('counts the refused mail through an index: a scrape does not read the whole outbox', async () => {
      const count = "select count(*) from outbox where status = 'failed'"
      const plan =
        dialect === 'sqlite'
          ? (await sql<{ detail: string }>`explain query plan ${sql.raw(count)}`.execute(t.ctx.db)).rows
              .map((r) => r.detail)
              .join('\n')
          : await t.ctx.db.transaction().execute(async (trx) => {
              // The outbox here is small: without this the planner would rightly read it whole.
              await sql`set local enable_seqscan = off`.execute(trx)
              const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${sql.raw(count)}`.execute(trx)
              return rows.map((r) => r['QUERY PLAN']).join('\n')
            })
      assert.match(plan, /outbox_status_idx/, plan)
    })

    it('counts disabled webhook endpoints in hostapi_webhook_endpoints{state="disabled"}', async () => {
      const disabled = async () => (await scrape()).get('hostapi_webhook_endpoints{state="disabled"}')
      assert.equal(await disabled(), 0)
      const hook = await t.request('POST', '/account/webhooks', {
        key: a.key,
        body: { url: 'https://receiver.example.com/hook', events: ['*'] },
      })
      assert.equal(hook.status, 200, hook.text)
      // As the deliverer leaves an endpoint after days of failed deliveries.
      await updateEndpoint(t.ctx.db, a.accountId, hook.body.data.id, {
        enabled: 0,
        disabled_reason: 'Every delivery failed since 2026-01-01T00:00:00.000Z',
      })
      assert.equal(await disabled(), 1)
    })

    it('has no Redis series without REDIS_URL', async () => {
      const names = [...(await scrape()).keys()]
      assert.deepEqual(
        names.filter((n) => n.startsWith('hostapi_redis_')),
        [],
      )
    })
  })
})

describe('Redis connection and breaker state in the metrics', () => {
  let redis: OwnRedis
  let t: TestApp
  before(async () => {
    redis = await OwnRedis.start()
    t = await startTestApp('sqlite', { env: { REDIS_URL: redis.url, HOSTAPI_REDIS_RETRY_MS: '60000' } })
  })
  after(async () => {
    redis.resume()
    await t.close()
    await redis.kill()
  })
  const scrape = async () => samples(await t.ctx.ops.metrics.text())

  it('shows hostapi_redis_connected and hostapi_redis_breaker_open as /readyz sees them', async () => {
    let s = await scrape()
    assert.equal(s.get('hostapi_redis_connected'), 1)
    assert.equal(s.get('hostapi_redis_breaker_open'), 0)
    // Redis hangs: commands time out and the breaker opens; the connection itself stays open.
    redis.pause()
    for (let i = 0; i < 3; i++) await t.ctx.redisGuard!.run((r) => r.ping()).catch(() => undefined)
    s = await scrape()
    assert.equal(s.get('hostapi_redis_breaker_open'), 1)
    assert.equal(s.get('hostapi_redis_connected'), 1)
    redis.resume()
    // Redis goes away: the client is no longer connected.
    await redis.kill()
    await eventually(async () => (await scrape()).get('hostapi_redis_connected') === 0, {
      what: 'hostapi_redis_connected is 0',
      timeoutMs: 5000,
    })
  })
})
