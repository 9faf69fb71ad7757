import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { fixtures } from './helpers/fixtures.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import { makeTicket } from './helpers/fixtures/account.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { API_PREFIX } from '../src/http/constants.js'
import type { RouteEntry } from '../src/http/route-table.js'

/**
 * The database round trips of one uncached answer (HOSTAPI_RESPONSE_CACHE_MB=0) of every cacheable read of the
 * customer API, with the API key's lookup cached: the floor is 0 for the key (its lookup is cached) and 0 for the
 * data version (not read without the response cache; with it, on PostgreSQL, one indexed read unless the key's
 * lookup read it), so a read built by the database in one statement costs 1. A new cacheable route must be given
 * its figure here.
 */
const LIMITS: Record<string, number> = {
  // The caller's address and customer number, known with the key.
  whoami: 0,
  // Built by the database as one JSON text (ARCHITECTURE.md, "Reads as one JSON value").
  listDomains: 1,
  getDnsRecords: 1,
  listTickets: 1,
  listVps: 1,
  // Not yet built by the database: their figures today, which may only go down.
  getDomain: 2,
  getDnsZoneFile: 3,
  getTicket: 2,
  // The VPS, then the hypervisor driver's own read behind its interface (a driver reads no module's table).
  listVpsBackups: 2,
}

forEachDialect((dialect) => {
  describe(`round trips of an uncached read, every cacheable route (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_RESPONSE_CACHE_MB: '0' } })
      a = await t.account('Reads')
      // Some of everything the lists show.
      const zone = await makeDomain(t, a)
      await makeDomain(t, a)
      const records = [1, 2, 3].map((i) => ({ type: 'A', name: `www${i}`, value: `192.0.2.${i}`, ttl: 3600 }))
      assert.equal(
        (await t.request('PUT', `${API_PREFIX}/domains/${zone}/dns`, { key: a.key, body: { records } })).status,
        200,
      )
      await makeTicket(t, a)
      await makeTicket(t, a, 'Another')
      await makeVps(t, a, { settle: true })
    })
    after(() => t?.close())

    const cacheable = (): RouteEntry[] =>
      t.server.app.routeTable.filter((r) => r.method === 'GET' && r.cache && r.url.startsWith(API_PREFIX))

    it('every cacheable read has a figure', () => {
      assert.ok(cacheable().length >= Object.keys(LIMITS).length)
      for (const r of cacheable()) assert.ok(r.operationId && r.operationId in LIMITS, `${r.url}: give it a figure`)
    })

    /**
     * Reads every cacheable route four times and gives, for each, its path and the fewest that `count` moved during
     * one of the calls after the first `warm` ones: background work (the job runner) may add to one call, so the
     * fewest is the read's own.
     */
    const fewestPerRead = async (count: () => number, warm: number) => {
      const out: { r: RouteEntry; path: string; fewest: number }[] = []
      for (const r of cacheable()) {
        const f = r.fixture ? await fixtures[r.fixture](t, a, r) : { params: {} }
        const path = r.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(String(f.params[name])))
        let fewest = Number.POSITIVE_INFINITY
        for (let i = 0; i < 4; i++) {
          const before = count()
          const reply = await t.request('GET', path, { key: a.key })
          const used = count() - before
          assert.equal(reply.status, 200, `${path}: ${reply.text}`)
          if (i >= warm) fewest = Math.min(fewest, used)
        }
        out.push({ r, path, fewest })
      }
      return out
    }

    it('answers each in at most its figure of round trips (1 for a read built by the database)', async () => {
      // The first call looks the key up; later ones find it cached.
      for (const { r, path, fewest } of await fewestPerRead(() => t.ctx.roundTrips(), 1)) {
        const limit = LIMITS[r.operationId ?? '']
        assert.ok(fewest <= limit, `${r.operationId} (${path}) took ${fewest} round trips, at most ${limit} allowed`)
      }
    })

    // Kysely's building and compiling of a statement cost about a tenth of an uncached read: each read's statements
    // are compiled once (src/db/compiled.ts).
    it('compiles no statement once warm', async () => {
      const compiled = (await fewestPerRead(() => t.ctx.compiles(), 1))
        .filter((x) => x.fewest > 0)
        .map((x) => `${x.r.operationId} (${x.path}): ${x.fewest}`)
      assert.deepEqual(compiled, [], 'reads that compiled statements once warm')
    })

    // PostgreSQL parses and plans an unnamed statement on every execution, more work than running most of these reads.
    if (dialect === 'postgres')
      it('sends each read as named prepared statements once warm', async () => {
        const counts = t.ctx.statementCounts
        assert.ok(counts, 'prepared statements are on by default')
        // A text is named from its second use.
        for (const { r, path, fewest } of await fewestPerRead(() => counts().unnamed, 2))
          assert.equal(fewest, 0, `${r.operationId} (${path}) sent ${fewest} statements unnamed`)
      })
  })
})
