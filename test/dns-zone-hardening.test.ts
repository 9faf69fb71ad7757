import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import {
  forEachDialect,
  processDatabase,
  request,
  startTestApp,
  type ProcessDatabase,
  type TestAccount,
  type TestApp,
} from './helpers/app.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import { spawnServer, type ServerProcess } from './helpers/process.js'

const KEY = 'zoneHardeningZoneHardening0001'
const DOMAIN = 'demo-shop.nl'
const updated = { status: 200, status_description: 'DNS successfully updated' }

// Characters the zone tokenizer used to loop on without advancing (the process grew until it died).
const hostile = [
  '\u00a0',
  '\u000b',
  '\u000c',
  '\ufeff',
  '\u2028',
  '\u2029',
  '\u3000',
  '\u0085',
  '\u1680',
  '\u200b',
  '\u0000',
  'www 300 IN A 192.0.2.1\u00a0\n',
  'x\u00a0A 192.0.2.1',
]

forEachDialect((dialect) => {
  // Its own server process: a request that hangs the event loop there makes the request here time out,
  // so the test fails instead of hanging the test runner with it.
  describe(`zone import of whitespace and control characters (${dialect})`, () => {
    let db: ProcessDatabase
    let server: ServerProcess
    let origin: string
    const call = (method: string, p: string, body?: unknown) =>
      request(origin, method, p, { key: KEY, ...(body === undefined ? {} : { body }) })

    before(async () => {
      db = await processDatabase(dialect)
      server = spawnServer({
        ...db.env,
        HOSTAPI_PORT: '0',
        HOSTAPI_DNS_PORT: '0',
        HOSTAPI_DEMO_KEY: KEY,
        HOSTAPI_JOBS: '0',
      })
      const [, base] = await server.waitFor(/^hostapi listening on (\S+)/, 60_000)
      origin = base!.replace(/\/api\/v2$/, '')
    })
    after(async () => {
      server?.child.kill('SIGKILL')
      await server?.exited
      await db?.remove()
    })

    it('answers 400 naming the line, for a dry run and a real import, and keeps serving', {
      timeout: 60_000,
    }, async () => {
      const before = await call('GET', `/domains/${DOMAIN}/dns`)
      assert.equal(before.status, 200, before.text)
      for (const zone of hostile) {
        for (const query of ['?test=1', '']) {
          const r = await call('PUT', `/domains/${DOMAIN}/dns/zone${query}`, { zone })
          // A lone character is no record (400); after a value it is trimmed away like any surrounding space (200).
          if (zone.length > 1 && r.status === 200) continue
          assert.equal(r.status, 400, `${JSON.stringify(zone)}: ${r.text}`)
          assert.equal(r.body.status, 400)
          // NUL is refused by the JSON parser (Invalid JSON body), every other one by the zone parser.
          assert.match(r.body.status_description, /^Invalid (zone file: line \d+|JSON body): /)
        }
      }
      const still = await call('GET', `/domains/${DOMAIN}/dns`)
      assert.equal(still.status, 200)
      assert.ok(Array.isArray(still.body.data.records))
    })

    it('keeps such characters inside a quoted TXT value', { timeout: 60_000 }, async () => {
      const r = await call('PUT', `/domains/${DOMAIN}/dns/zone?test=1`, { zone: 'txt 300 IN TXT "a\u00a0b\u3000c"\n' })
      assert.equal(r.status, 200, r.text)
    })
  })
})

/** A zone text of `n` A records (and one TXT of `txt` characters per record when given). */
function zoneOf(n: number, txt = 0): string {
  const rows = ['$TTL 3600']
  for (let i = 0; i < n; i++) {
    rows.push(`host${i} 300 IN A 192.0.2.${i % 250}`)
    if (txt) rows.push(`host${i} 300 IN TXT "${'t'.repeat(txt)}"`)
  }
  return `${rows.join('\n')}\n`
}

forEachDialect((dialect) => {
  describe(`large zone imports and record replaces in the worker pool (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      // Every input goes to the pool (inline thresholds 0), with small limits to reach them cheaply.
      t = await startTestApp(dialect, {
        env: {
          HOSTAPI_ZONE_INLINE_BYTES: '0',
          HOSTAPI_ZONE_INLINE_RECORDS: '0',
          HOSTAPI_ZONE_MAX_BYTES: '200000',
          HOSTAPI_ZONE_MAX_RECORDS: '1000',
          HOSTAPI_ZONE_QUEUE: '0',
          // One account may fill the pool here, to reach the full queue; the per-account bound is tested on its own.
          HOSTAPI_ZONE_PER_ACCOUNT: '100',
        },
      })
      a = await t.account('Zone pool')
    })
    after(() => t.close())

    it('imports a zone parsed in a worker, and answers its errors as inline', { timeout: 60_000 }, async () => {
      const d = await makeDomain(t, a)
      const ok = await t.request('PUT', `/domains/${d}/dns/zone`, { key: a.key, body: { zone: zoneOf(300) } })
      assert.deepEqual(ok.body, updated)
      const records = (await t.request('GET', `/domains/${d}/dns`, { key: a.key })).body.data.records as {
        type: string
      }[]
      assert.equal(records.length, 300)
      const bad = await t.request('PUT', `/domains/${d}/dns/zone`, {
        key: a.key,
        body: { zone: `${zoneOf(3)}www IN A 300.1.1.1\n` },
      })
      assert.deepEqual(bad.body, {
        status: 400,
        status_description: `Invalid zone file: line 5: A www.${d}.: value "300.1.1.1" is not an IPv4 address`,
      })
      const hostile = await t.request('PUT', `/domains/${d}/dns/zone?test=1`, { key: a.key, body: { zone: '\u00a0' } })
      assert.equal(hostile.status, 400)
    })

    it('refuses a zone over the size limit with 413 and over the record limit with 400, changing nothing', {
      timeout: 60_000,
    }, async () => {
      const d = await makeDomain(t, a)
      await t.request('PUT', `/domains/${d}/dns/zone`, { key: a.key, body: { zone: zoneOf(2) } })
      const big = await t.request('PUT', `/domains/${d}/dns/zone?test=1`, {
        key: a.key,
        body: { zone: `; ${'x'.repeat(200_000)}\n` },
      })
      assert.deepEqual(big.body, { status: 413, status_description: 'Zone file too large: at most 200000 bytes' })
      assert.equal(big.status, 413)
      // Bytes, not characters: 70 000 three-byte characters are 210 000 bytes.
      const wide = await t.request('PUT', `/domains/${d}/dns/zone`, {
        key: a.key,
        body: { zone: `; ${'\u20ac'.repeat(70_000)}\n` },
      })
      assert.equal(wide.status, 413)
      const many = await t.request('PUT', `/domains/${d}/dns/zone`, { key: a.key, body: { zone: zoneOf(1001) } })
      assert.deepEqual(many.body, { status: 400, status_description: 'Too many DNS records: at most 1000 per zone' })
      const put = await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: { records: Array.from({ length: 1001 }, (_, i) => ({ type: 'A', name: `h${i}`, value: '192.0.2.1' })) },
      })
      assert.deepEqual(put.body, { status: 400, status_description: 'Too many DNS records: at most 1000 per zone' })
      assert.equal((await t.request('GET', `/domains/${d}/dns`, { key: a.key })).body.data.records.length, 2)
    })

    it('validates a record replace in a worker with the same answers', { timeout: 60_000 }, async () => {
      const d = await makeDomain(t, a)
      const records = Array.from({ length: 50 }, (_, i) => ({ type: 'A', name: `h${i}`, value: '192.0.2.1' }))
      assert.deepEqual((await t.request('PUT', `/domains/${d}/dns`, { key: a.key, body: { records } })).body, updated)
      const bad = await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: { records: [...records, { type: 'CNAME', name: 'h1', value: 'x.example.net' }] },
      })
      assert.equal(bad.status, 400)
      assert.match(bad.body.status_description, /^Invalid DNS record CNAME/)
    })

    it('answers 503 with Retry-After when every worker is busy and the queue is full, and serves the rest', {
      timeout: 120_000,
    }, async () => {
      const d = await makeDomain(t, a)
      const zone = zoneOf(450, 300)
      const replies = await Promise.all(
        Array.from({ length: 6 }, () =>
          t.request('PUT', `/domains/${d}/dns/zone?test=1`, { key: a.key, body: { zone } }),
        ),
      )
      for (const r of replies) assert.ok(r.status === 200 || r.status === 503, r.text)
      const busy = replies.filter((r) => r.status === 503)
      assert.ok(busy.length >= 1, 'one worker and no queue: six at once cannot all run')
      assert.ok(
        replies.some((r) => r.status === 200),
        'the first one runs',
      )
      for (const r of busy) {
        assert.deepEqual(r.body, {
          status: 503,
          status_description: 'Too many large DNS changes in progress, try again shortly',
        })
        assert.equal(r.headers['retry-after'], '5')
      }
    })
  })
})
