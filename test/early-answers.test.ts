// Cached reads answered before routing (src/http/early-answers.ts) answer exactly what Fastify answers. Generated from
// the route table: every GET route with `config.cache` is read once (computed and kept), then again (answered before
// routing: hostapi_http_answered_before_routing_total goes up by one), then with `Content-Length: 0` (a request with
// a body is never answered from the cache, so its handler runs); the two answers must agree in status, body and
// headers, names in the same order. Then what must not be answered early: a spent budget, a changed version, a
// request from a key whose cache entry has expired.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import https from 'node:https'
import {
  describeWithEnv,
  forEachDialect,
  startTestApp,
  type Reply,
  type TestAccount,
  type TestApp,
} from './helpers/app.js'
import { fixtures } from './helpers/fixtures.js'
import type { Dialect } from '../src/db/database.js'
import { API_PREFIX } from '../src/http/constants.js'

/** Headers that differ between any two answers: when, which request, and the budget's count. */
const PER_REQUEST = new Set(['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset'])

async function answeredEarly(t: TestApp): Promise<number> {
  const text = await t.ctx.ops.metrics.text()
  const line = /^hostapi_http_answered_before_routing_total (\d+)$/m.exec(text)
  assert.ok(line, 'hostapi_http_answered_before_routing_total is exported')
  return Number(line[1])
}

/** The path of every cached GET route of the API, with its fixture's parameters filled in for `a`. */
async function cachedPaths(t: TestApp, a: TestAccount): Promise<{ url: string; path: string }[]> {
  const routes = t.server.app.routeTable.filter((r) => r.cache && r.method === 'GET' && r.url.startsWith(API_PREFIX))
  assert.ok(routes.length >= 8, `cached routes found: ${routes.length}`)
  const paths = []
  for (const r of routes) {
    const { params } = r.fixture ? await fixtures[r.fixture](t, a, r) : { params: {} }
    const path = r.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(params[name]))
    paths.push({ url: r.url, path: path.slice(API_PREFIX.length) })
  }
  return paths
}

/** An answer's headers but those of PER_REQUEST, in the order they came. */
const steady = (r: Reply) => Object.entries(r.headers).filter(([n]) => !PER_REQUEST.has(n))

/** `GET /whoami` from a connection of its own made from `localAddress` (any 127.x.y.z reaches the loopback listener). */
function whoamiFrom(t: TestApp, key: string, localAddress: string): Promise<{ status: number; ip: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(`${API_PREFIX}/whoami`, t.origin),
      { headers: { 'api-key': key }, localAddress, agent: false, rejectUnauthorized: false },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          text += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ip: JSON.parse(text).data?.ip }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** An answer that names the caller's address (`/whoami`) is served again only to that address. */
async function perAddress(t: TestApp, key: string) {
  const seen = []
  for (const from of ['127.0.0.1', '127.0.0.1', '127.0.0.2', '127.0.0.1', '127.0.0.2']) {
    const answer = await whoamiFrom(t, key, from)
    assert.equal(answer.status, 200)
    seen.push(answer.ip)
  }
  assert.deepEqual(seen, ['127.0.0.1', '127.0.0.1', '127.0.0.2', '127.0.0.1', '127.0.0.2'])
}

/** The generated comparison, on `dialect` with the rate limit's counters in memory or, with `redis`, in Redis. */
function answersAsRouted(dialect: Dialect, redis: string | null) {
  return () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      const env = { HOSTAPI_RATE_LIMIT: '100000', HOSTAPI_AUTH_CACHE_MS: '60000' }
      t = await startTestApp(dialect, { env: redis ? { ...env, REDIS_URL: redis } : env })
      a = await t.account('Early Answers B.V.')
    })
    after(() => t.close())

    it('answer what Fastify answers, for every route with config.cache', async () => {
      for (const { url, path } of await cachedPaths(t, a)) {
        const first = await t.request('GET', path, { key: a.key })
        assert.equal(first.status, 200, `${url}: ${first.text}`)
        const before = await answeredEarly(t)
        const early = await t.request('GET', path, { key: a.key, headers: { 'x-request-id': 'early-1' } })
        assert.equal(await answeredEarly(t), before + 1, `${url}: the second read is answered before routing`)
        const routed = await t.request('GET', path, { key: a.key, rawBody: '' })
        assert.equal(await answeredEarly(t), before + 1, `${url}: a read with a body goes to its route`)
        assert.equal(early.status, 200, `${url}: ${early.text}`)
        assert.equal(routed.status, 200, `${url}: ${routed.text}`)
        assert.equal(early.text, routed.text, `${url}: the same body`)
        assert.deepEqual(Object.keys(early.headers), Object.keys(routed.headers), `${url}: the same headers, in order`)
        assert.deepEqual(steady(early), steady(routed), `${url}: the same header values`)
        assert.equal(early.headers['x-request-id'], 'early-1', `${url}: the request id is echoed`)
        assert.equal(
          Number(early.headers['ratelimit-remaining']),
          Number(routed.headers['ratelimit-remaining']) + 1,
          `${url}: the early answer counted against the budget`,
        )
      }
    })

    it('an answer naming the address only to that address', () => perAddress(t, a.key))

    it('no version read for an answer that reads no data (cache: { data: false })', async () => {
      await t.request('GET', '/whoami', { key: a.key })
      const before = t.ctx.roundTrips()
      for (let i = 0; i < 3; i++) assert.equal((await t.request('GET', '/whoami', { key: a.key })).status, 200)
      assert.equal(t.ctx.roundTrips() - before, 0)
    })

    it('not after a write: the answer computed again shows it', async () => {
      const path = '/account/tickets'
      await t.request('GET', path, { key: a.key })
      await t.request('GET', path, { key: a.key })
      const made = await t.request('POST', '/account/tickets', {
        key: a.key,
        body: { subject: 'Early answers', message: 'Is this ticket in the list?', department: 'support' },
      })
      assert.equal(made.status, 200, made.text)
      const before = await answeredEarly(t)
      const list = await t.request('GET', path, { key: a.key })
      assert.equal(list.status, 200)
      assert.match(list.text, /Early answers/)
      assert.equal(await answeredEarly(t), before, 'the changed version sent the read to its route')
    })
  }
}

forEachDialect((dialect) => {
  describe(`cached reads answered before routing (${dialect})`, answersAsRouted(dialect, null))
  describeWithEnv(
    ['HOSTAPI_TEST_REDIS_URL'],
    `cached reads answered before routing, the budget in Redis (${dialect})`,
    answersAsRouted(dialect, process.env.HOSTAPI_TEST_REDIS_URL ?? null),
  )

  describe(`a cached read past its budget is refused as any other (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_RATE_LIMIT: '3', HOSTAPI_AUTH_CACHE_MS: '60000' } })
      a = await t.account('Early Budget B.V.')
    })
    after(() => t.close())

    it('429 in the envelope with Retry-After, from its route', async () => {
      const statuses = []
      for (let i = 0; i < 3; i++) statuses.push((await t.request('GET', '/vps', { key: a.key })).status)
      assert.deepEqual(statuses, [200, 200, 200])
      const refused = await t.request('GET', '/vps', { key: a.key })
      assert.equal(refused.status, 429, refused.text)
      assert.equal(refused.body.status, 429)
      assert.ok(Number(refused.headers['retry-after']) >= 1)
      assert.equal(refused.headers['ratelimit-remaining'], '0')
    })
  })
})

describe('cached reads are not answered before routing in sandbox mode or behind a trusted proxy', () => {
  for (const env of [{ HOSTAPI_SANDBOX: '1' }, { HOSTAPI_TRUSTED_PROXIES: '10.0.0.1' }] as Record<string, string>[]) {
    it(Object.keys(env)[0], async () => {
      const t = await startTestApp('sqlite', { env: { ...env, HOSTAPI_AUTH_CACHE_MS: '60000' } })
      try {
        const a = await t.account('Routed B.V.')
        const reads = []
        for (let i = 0; i < 3; i++) reads.push(await t.request('GET', '/vps', { key: a.key }))
        assert.deepEqual(
          reads.map((r) => r.status),
          [200, 200, 200],
        )
        assert.equal(await answeredEarly(t), 0)
        await perAddress(t, a.key)
      } finally {
        await t.close()
      }
    })
  }
})
