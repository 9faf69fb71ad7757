import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { isDeepStrictEqual } from 'node:util'
import {
  describeWithEnv,
  forEachDialect,
  startTestApp,
  type Reply,
  type TestAccount,
  type TestApp,
} from './helpers/app.js'
import { OwnRedis } from './helpers/redis.js'
import { ManualClock } from '../src/clock.js'
import { eventually } from './helpers/wait.js'

const redisUrl = process.env.HOSTAPI_TEST_REDIS_URL
const LIMITED = { status: 429, status_description: 'Rate limit exceeded' }
const NO_KEY = { status: 401, status_description: 'No valid API key set' }
const NO_TOKEN = { status: 401, status_description: 'No valid admin token set' }
// The app believes X-Forwarded-For from 127.0.0.1, so each test speaks from addresses of its own.
const env = { HOSTAPI_TRUSTED_PROXIES: '127.0.0.1', HOSTAPI_AUTH_FAIL_LIMIT: '3', HOSTAPI_AUTH_FAIL_WINDOW: '300' }
const from = (ip: string, headers: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...headers })
const retryAfter = (r: Reply) => Number(r.headers['retry-after'])

forEachDialect((dialect) => {
  describe(`failed-credential throttle per address (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let adminToken: string
    const clock = new ManualClock()
    const whoami = (ip: string, key?: string) => t.request('GET', '/whoami', { key, headers: from(ip) })
    const admin = (ip: string, token: string) =>
      t.request('GET', '/admin/v1/accounts', { headers: from(ip, { authorization: `Bearer ${token}` }) })

    before(async () => {
      t = await startTestApp(dialect, { env, clock })
      a = await t.account()
      adminToken = (await t.ctx.services.admin.createToken('throttle')).token
    })
    after(() => t.close())

    it('answers 429 with Retry-After after the limit of wrong keys, refuses the right key until the window ends, and spares other addresses', async () => {
      const ip = '203.0.113.1'
      for (let i = 0; i < 3; i++) assert.deepEqual((await whoami(ip, `wrong-key-${i}-000000000000000000`)).body, NO_KEY)
      const limited = await whoami(ip, 'wrong-key-3-000000000000000000')
      assert.equal(limited.status, 429)
      assert.deepEqual(limited.body, LIMITED)
      assert.match(String(limited.headers['content-type']), /^application\/json/)
      assert.ok(
        retryAfter(limited) >= 299 && retryAfter(limited) <= 300,
        `Retry-After ${limited.headers['retry-after']}`,
      )

      const right = await whoami(ip, a.key)
      assert.deepEqual(right.body, LIMITED)
      clock.advance(100_000)
      const later = await whoami(ip, a.key)
      assert.deepEqual(later.body, LIMITED)
      assert.ok(retryAfter(later) >= 199 && retryAfter(later) <= 200, `Retry-After ${later.headers['retry-after']}`)
      // The admin API refuses the address too: one count per address for keys and tokens.
      assert.deepEqual((await admin(ip, adminToken)).body, LIMITED)

      const other = await whoami('203.0.113.2', a.key)
      assert.equal(other.status, 200)
      assert.equal(other.body.data.ip, '203.0.113.2')
      assert.deepEqual((await whoami('203.0.113.2', 'wrong-key-x-000000000000000000')).body, NO_KEY)

      clock.advance(200_000)
      const open = await whoami(ip, a.key)
      assert.equal(open.status, 200, open.text)
      assert.equal(open.body.data.ip, ip)
    })

    it('counts expired and off-whitelist keys, not requests without a key', async () => {
      const iam = t.ctx.services.iam
      const expired = await iam.createKey(a.accountId, a.userId, {
        expiresAt: new Date(clock.now().getTime() - 60_000),
      })
      const elsewhere = await iam.createKey(a.accountId, a.userId, { allowedIps: ['198.51.100.1'] })
      const ip = '203.0.113.10'
      for (let i = 0; i < 10; i++) assert.deepEqual((await whoami(ip)).body, NO_KEY)
      assert.equal((await whoami(ip, a.key)).status, 200)
      assert.equal((await whoami(ip, expired.key)).body.status_description, 'API key has expired')
      assert.equal(
        (await whoami(ip, elsewhere.key)).body.status_description,
        `Remote IP address is not found in the API key whitelist (${ip})`,
      )
      assert.deepEqual((await whoami(ip, 'wrong-key-000000000000000000000')).body, NO_KEY)
      assert.deepEqual((await whoami(ip, a.key)).body, LIMITED)
      assert.deepEqual((await whoami(ip)).body, LIMITED)
      // Public routes need no credential and stay open.
      assert.equal((await t.request('GET', '/healthz', { headers: from(ip) })).status, 200)
      clock.advance(300_000)
    })

    it('throttles wrong admin tokens, then the right one, on the admin API and the customer API', async () => {
      const ip = '198.51.100.20'
      for (let i = 0; i < 3; i++) assert.deepEqual((await admin(ip, `adm_wrongwrongwrongwrong${i}`)).body, NO_TOKEN)
      const limited = await admin(ip, 'adm_wrongwrongwrongwrong3')
      assert.deepEqual(limited.body, LIMITED)
      assert.ok(retryAfter(limited) >= 1)
      assert.deepEqual((await admin(ip, adminToken)).body, LIMITED)
      assert.deepEqual((await whoami(ip, a.key)).body, LIMITED)
      assert.equal((await admin('198.51.100.21', adminToken)).status, 200)
      clock.advance(300_000)
      assert.equal((await admin(ip, adminToken)).status, 200)
    })

    it('counts an IPv6 address for its /64', async () => {
      for (let i = 1; i <= 3; i++)
        assert.deepEqual((await whoami(`2001:db8:7:7::${i}`, `wrong-${i}-0000000000000000000000`)).body, NO_KEY)
      assert.deepEqual((await whoami('2001:db8:7:7:ffff:1:2:3', a.key)).body, LIMITED)
      assert.equal((await whoami('2001:db8:7:8::1', a.key)).status, 200)
      clock.advance(300_000)
      assert.equal((await whoami('2001:db8:7:7::1', a.key)).status, 200)
    })

    it('believes X-Forwarded-For only from a trusted proxy', async () => {
      // Without trusted proxies every request comes from 127.0.0.1, whatever the header says.
      const plain = await startTestApp(dialect, { env: { HOSTAPI_AUTH_FAIL_LIMIT: '2' }, clock, shareDatabaseWith: t })
      try {
        for (let i = 0; i < 2; i++) {
          assert.deepEqual(
            (
              await plain.request('GET', '/whoami', {
                key: `wrong-${i}-00000000000000000000`,
                headers: from(`192.0.2.${i}`),
              })
            ).body,
            NO_KEY,
          )
        }
        assert.deepEqual(
          (await plain.request('GET', '/whoami', { key: a.key, headers: from('192.0.2.99') })).body,
          LIMITED,
        )
      } finally {
        await plain.close()
      }
    })
  })

  describeWithEnv(['HOSTAPI_TEST_REDIS_URL'], `failed-credential throttle shared through Redis (${dialect})`, () => {
    let one: TestApp
    let two: TestApp
    let a: TestAccount
    const clock = new ManualClock()
    before(async () => {
      // A generous Redis timeout: a machine busy with parallel tests must not trip the breaker (per-instance counts).
      // The per-key rate limit (whose 429 has the same text) out of the way of the polling below, and key lookups
      // kept longer than the throttle's grace, so that the grace is what the last test measures.
      const shared = {
        ...env,
        REDIS_URL: redisUrl!,
        HOSTAPI_REDIS_TIMEOUT_MS: '1000',
        HOSTAPI_RATE_LIMIT: '100000',
        HOSTAPI_AUTH_CACHE_MS: '60000',
      }
      one = await startTestApp(dialect, { env: shared, clock })
      two = await startTestApp(dialect, { env: shared, clock, shareDatabaseWith: one })
      a = await one.account()
    })
    after(async () => {
      await two.close()
      await one.close()
    })

    it('counts wrong keys on both instances together, and the window ends on the app clock', async () => {
      const ip = '203.0.113.50'
      const call = (app: TestApp, key: string) => app.request('GET', '/whoami', { key, headers: from(ip) })
      assert.deepEqual((await call(one, 'wrong-a-0000000000000000000000')).body, NO_KEY)
      assert.deepEqual((await call(two, 'wrong-b-0000000000000000000000')).body, NO_KEY)
      assert.deepEqual((await call(one, 'wrong-c-0000000000000000000000')).body, NO_KEY)
      const limited = await call(two, a.key)
      assert.deepEqual(limited.body, LIMITED)
      assert.ok(retryAfter(limited) >= 299 && retryAfter(limited) <= 300)
      assert.deepEqual((await call(one, a.key)).body, LIMITED)
      assert.equal((await two.request('GET', '/whoami', { key: a.key, headers: from('203.0.113.51') })).status, 200)
      clock.advance(300_000)
      assert.equal((await call(two, a.key)).status, 200)
      assert.equal((await call(one, a.key)).status, 200)
    })

    it('admits an address found clear for at most a second: failures here count at once, elsewhere within it', async () => {
      const wrong = (n: number) => `wrong-${n}-0000000000000000000000`
      // Failures counted by this instance end its grace at once.
      const here = (key: string) => one.request('GET', '/whoami', { key, headers: from('203.0.113.60') })
      assert.equal((await here(a.key)).status, 200)
      for (const n of [1, 2, 3]) assert.deepEqual((await here(wrong(n))).body, NO_KEY)
      assert.deepEqual((await here(a.key)).body, LIMITED)
      // `two` found this address clear just before `one` counted its failures: it asks Redis again within a second.
      const call = (app: TestApp, key: string) => app.request('GET', '/whoami', { key, headers: from('203.0.113.61') })
      assert.equal((await call(two, a.key)).status, 200)
      for (const n of [4, 5, 6]) assert.deepEqual((await call(one, wrong(n))).body, NO_KEY)
      const started = performance.now()
      await eventually(async () => isDeepStrictEqual((await call(two, a.key)).body, LIMITED), {
        what: 'the other instance refuses the right key',
        timeoutMs: 5_000,
      })
      assert.ok(performance.now() - started < 2_000, `refused after ${Math.round(performance.now() - started)} ms`)
    })
  })
})

describe('Redis stopped under load and started again', () => {
  let redis: OwnRedis
  let one: TestApp
  let two: TestApp
  before(async () => {
    redis = await OwnRedis.start()
    // A short retry time so the breaker tries Redis again soon after it is back; a timeout that a machine busy with
    // parallel tests does not reach while Redis is up (a hung Redis then costs 500 ms to the first requests).
    const shared = {
      ...env,
      REDIS_URL: redis.url,
      HOSTAPI_RATE_LIMIT: '5',
      HOSTAPI_REDIS_RETRY_MS: '200',
      HOSTAPI_REDIS_TIMEOUT_MS: '500',
    }
    one = await startTestApp('sqlite', { env: shared })
    two = await startTestApp('sqlite', { env: shared, shareDatabaseWith: one })
  })
  after(async () => {
    await two.close()
    await one.close()
    await redis.kill()
  })

  const ready = async (app: TestApp) => (await app.request('GET', '/readyz')).body
  /** Polls /readyz of both instances until `redis` is `want` (a state change the test caused, reported when Redis notices). */
  const until = (want: 'ok' | 'degraded') =>
    eventually(
      async () => {
        const states = [await ready(one), await ready(two)]
        assert.ok(
          states.every((s) => s.data.redis === want),
          `readyz says ${JSON.stringify(states)}`,
        )
        return states
      },
      { what: `both instances report redis ${want}`, timeoutMs: 15_000 },
    )
  /** Alternates requests between the instances with a fresh key: the per-key limit (5) is shared when the statuses say so. */
  const alternate = async (n: number) => {
    const acc = await one.account()
    const statuses: number[] = []
    for (let i = 0; i < n; i++)
      statuses.push((await (i % 2 ? two : one).request('GET', '/whoami', { key: acc.key })).status)
    return statuses
  }

  it('keeps answering, reports redis degraded with per-instance limits, and shares limits again once Redis is back', async () => {
    assert.deepEqual(await ready(one), {
      status: 200,
      status_description: 'Ready',
      data: { database: 'ok', migrations: 'ok', redis: 'ok' },
    })
    assert.deepEqual(await alternate(6), [200, 200, 200, 200, 200, 429])

    // Load: 8 callers; every key serves 4 requests at most, so the per-key limit (5) never answers 429 here.
    const acc = await one.account()
    const pool: string[] = []
    for (let i = 0; i < 120; i++) pool.push((await one.ctx.services.iam.createKey(acc.accountId, acc.userId)).key)
    let stop = false
    let sent = 0
    const statuses: number[] = []
    const texts: string[] = []
    const worker = async () => {
      while (!stop && sent < pool.length * 4) {
        const n = sent++
        const r = await (n % 2 ? two : one).request('GET', '/whoami', { key: pool[Math.floor(n / 4)] })
        statuses.push(r.status)
        if (r.status !== 200) texts.push(r.text)
      }
    }
    const load = Promise.all(Array.from({ length: 8 }, worker))
    const served = (n: number) =>
      eventually(() => statuses.length >= n, { what: `${n} requests answered`, intervalMs: 10 })
    await served(40)
    await redis.kill()
    const atKill = statuses.length
    await served(atKill + 80)
    stop = true
    await load
    assert.deepEqual(texts, [], 'every request under load answered 200')
    assert.ok(statuses.length - atKill >= 80)

    const degraded = await until('degraded')
    for (const d of degraded) {
      assert.deepEqual(d, {
        status: 200,
        status_description: 'Ready',
        degraded: ['redis'],
        data: { database: 'ok', migrations: 'ok', redis: 'degraded' },
      })
    }
    // Limits hold per instance: five requests on each before the 429s.
    assert.deepEqual(await alternate(12), [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429, 429])
    // And the failed-credential throttle too.
    const ip = '203.0.113.77'
    for (let i = 0; i < 3; i++)
      assert.deepEqual(
        (await one.request('GET', '/whoami', { key: `wrong-${i}-000000000000000000000`, headers: from(ip) })).body,
        NO_KEY,
      )
    assert.deepEqual(
      (await one.request('GET', '/whoami', { key: 'wrong-3-000000000000000000000', headers: from(ip) })).body,
      LIMITED,
    )

    await redis.start()
    const back = await until('ok')
    for (const b of back)
      assert.deepEqual(b, {
        status: 200,
        status_description: 'Ready',
        data: { database: 'ok', migrations: 'ok', redis: 'ok' },
      })
    assert.deepEqual(await alternate(6), [200, 200, 200, 200, 200, 429])
  })

  it('keeps answering when Redis hangs (connections open, no answers) and reports it degraded until it answers again', async () => {
    redis.pause()
    try {
      const acc = await one.account()
      for (let i = 0; i < 8; i++)
        assert.equal((await (i % 2 ? two : one).request('GET', '/whoami', { key: acc.key })).status, 200)
      const degraded = await until('degraded')
      for (const d of degraded) assert.deepEqual(d.degraded, ['redis'])
    } finally {
      redis.resume()
    }
    await until('ok')
    assert.deepEqual(await alternate(6), [200, 200, 200, 200, 200, 429])
  })
})
