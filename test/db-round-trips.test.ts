import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { ManualClock } from '../src/clock.js'

// A route whose database work is known exactly: one query, then a transaction of one query (BEGIN, the query,
// COMMIT), then one that rolls back (BEGIN, the query, ROLLBACK): 7 statements.
const probeRoutes = async (app: FastifyInstance) => {
  app.get('/probe/round-trips', { config: { area: 'public' }, schema: { hide: true } }, async () => {
    const db = app.ctx.db
    await sql`select 1`.execute(db)
    await db.transaction().execute((trx) => sql`select 2`.execute(trx))
    await db
      .transaction()
      .execute(async (trx) => {
        await sql`select 3`.execute(trx)
        throw new Error('roll back')
      })
      .catch(() => undefined)
    return { status: 200, status_description: 'Request successful' }
  })
}

forEachDialect((dialect) => {
  describe(`database round trips on /metrics (${dialect})`, () => {
    let t: TestApp
    let token: string
    before(async () => {
      t = await startTestApp(dialect, { routes: [probeRoutes] })
      token = (await t.ctx.services.admin.createToken('test')).token
    })
    after(() => t.close())

    const roundTrips = async () => {
      const r = await t.request('GET', '/admin/v1/metrics', { headers: { authorization: `Bearer ${token}` } })
      assert.equal(r.status, 200)
      const m = /^hostapi_db_round_trips_total (\d+)$/m.exec(r.text)
      assert.ok(m, 'hostapi_db_round_trips_total is exposed')
      return Number(m[1])
    }

    it('counts every query, BEGIN, COMMIT and ROLLBACK a request makes', async () => {
      // A scrape costs round trips of its own (the token, the job counts): measured by two scrapes in a row.
      const first = await roundTrips()
      const second = await roundTrips()
      const scrape = second - first
      assert.ok(scrape > 0)
      for (const times of [1, 3]) {
        const before = await roundTrips()
        for (let i = 0; i < times; i++) assert.equal((await t.request('GET', '/probe/round-trips')).status, 200)
        assert.equal((await roundTrips()) - before - scrape, 7 * times)
      }
    })
  })

  describe(`the backups list of a VPS with a week of nightlies (${dialect})`, () => {
    const clock = new ManualClock()
    let t: TestApp
    after(() => t?.close())

    it('costs the same few round trips however many nightlies are due: they are written in one statement', async () => {
      t = await startTestApp(dialect, { clock })
      const a = await t.account('Backups')
      const id = await makeVps(t, a, { settle: true })
      const list = async () => {
        const before = t.ctx.roundTrips()
        const backups = await t.ctx.services.vps.backups.list(a.accountId, String(id))
        return { count: backups.length, roundTrips: t.ctx.roundTrips() - before }
      }
      clock.advance(10 * 86_400_000)
      // The VPS, the instance with its backups, the week's nightlies, the pruning (a new one was written), the list.
      assert.deepEqual(await list(), { count: 7, roundTrips: 5 })
      // Every nightly due is there: the VPS, and the instance with its backups.
      assert.deepEqual(await list(), { count: 7, roundTrips: 2 })
    })
  })
})

forEachDialect((dialect) => {
  describe(`key lookups that miss the cache together (${dialect})`, () => {
    // No job runner: its polls would count among the round trips.
    const apps: TestApp[] = []
    after(() => Promise.all(apps.map((a) => a.close())))

    const concurrentLookups = async (cacheMs: string) => {
      const t = await startTestApp(dialect, { env: { HOSTAPI_AUTH_CACHE_MS: cacheMs, HOSTAPI_JOBS: '0' } })
      apps.push(t)
      const { key } = await t.account()
      const iam = t.ctx.services.iam
      // The first use records the key's last use; the reads below need no write.
      await iam.authenticate(key, '127.0.0.1')
      const before = t.ctx.roundTrips()
      iam.invalidateAuthCache()
      const principals = await Promise.all(Array.from({ length: 20 }, () => iam.authenticate(key, '127.0.0.1')))
      assert.equal(new Set(principals.map((p) => p.keyId)).size, 1)
      // On PostgreSQL the forgetting is announced to the other instances: one round trip (pg_notify).
      return t.ctx.roundTrips() - before - (dialect === 'postgres' ? 1 : 0)
    }

    it('share one read of the key', async () => {
      assert.equal(await concurrentLookups('60000'), 1)
    })

    it('each make their own with the cache off (HOSTAPI_AUTH_CACHE_MS=0)', async () => {
      assert.equal(await concurrentLookups('0'), 20)
    })
  })
})
