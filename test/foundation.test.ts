import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { ManualClock } from '../src/clock.js'

forEachDialect((dialect) => {
  describe(`foundation over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_TRUSTED_PROXIES: '127.0.0.1', HOSTAPI_HTTP_PORT: '0' } })
      a = await t.account()
    })
    after(() => t.close())

    it('answers whoami in the envelope with the caller ip and customer number', async () => {
      const r = await t.request('GET', '/whoami', { key: a.key })
      assert.equal(r.status, 200)
      assert.match(String(r.headers['content-type']), /^application\/json/)
      assert.deepEqual(r.body, {
        status: 200,
        status_description: 'Request successful',
        data: { ip: '127.0.0.1', customer_number: a.customerNumber },
      })
      assert.ok(r.headers['x-request-id'])
      assert.equal(r.headers['x-content-type-options'], 'nosniff')
    })

    it('accepts the key header in any case and as a Bearer token', async () => {
      const forms: Record<string, string>[] = [
        { 'API-key': a.key },
        { 'API-KEY': a.key },
        { authorization: `Bearer ${a.key}` },
      ]
      for (const headers of forms) {
        const r = await t.request('GET', '/whoami', { headers })
        assert.equal(r.status, 200, JSON.stringify(headers))
      }
    })

    it('answers each 401 text', async () => {
      const missing = await t.request('GET', '/whoami')
      assert.deepEqual(missing.body, { status: 401, status_description: 'No valid API key set' })
      const unknown = await t.request('GET', '/whoami', { key: 'not-a-key-at-all-0000000000' })
      assert.deepEqual(unknown.body, { status: 401, status_description: 'No valid API key set' })

      const expired = await t.ctx.services.iam.createKey(a.accountId, a.userId, {
        expiresAt: new Date(Date.now() - 1000),
      })
      const e = await t.request('GET', '/whoami', { key: expired.key })
      assert.deepEqual(e.body, { status: 401, status_description: 'API key has expired' })

      const notYet = await t.ctx.services.iam.createKey(a.accountId, a.userId, {
        expiresAt: new Date(Date.now() + 86_400_000),
      })
      assert.equal((await t.request('GET', '/whoami', { key: notYet.key })).status, 200)

      const revoked = await t.ctx.services.iam.createKey(a.accountId, a.userId)
      await t.ctx.services.iam.revokeKey(a.accountId, String(revoked.id))
      assert.equal(
        (await t.request('GET', '/whoami', { key: revoked.key })).body.status_description,
        'No valid API key set',
      )
    })

    it('enforces IPv4, IPv6 and CIDR whitelists, believing X-Forwarded-For only from trusted proxies', async () => {
      const iam = t.ctx.services.iam
      const v4 = await iam.createKey(a.accountId, a.userId, { allowedIps: ['198.51.100.7'] })
      const cidr = await iam.createKey(a.accountId, a.userId, { allowedIps: ['203.0.113.0/24'] })
      const v6 = await iam.createKey(a.accountId, a.userId, { allowedIps: ['2001:db8::/32'] })
      const call = (key: string, from: string) =>
        t.request('GET', '/whoami', { key, headers: { 'x-forwarded-for': from } })

      const ok4 = await call(v4.key, '198.51.100.7')
      assert.equal(ok4.status, 200)
      assert.equal(ok4.body.data.ip, '198.51.100.7')
      const denied = await call(v4.key, '198.51.100.8')
      assert.deepEqual(denied.body, {
        status: 401,
        status_description: 'Remote IP address is not found in the API key whitelist (198.51.100.8)',
      })
      assert.equal((await call(cidr.key, '203.0.113.200')).status, 200)
      assert.equal((await call(cidr.key, '203.0.114.1')).status, 401)
      assert.equal((await call(v6.key, '2001:db8:1::5')).status, 200)
      assert.equal((await call(v6.key, '2001:db9::5')).status, 401)
      // The caller itself (127.0.0.1) is not on the whitelist.
      assert.equal(
        (await t.request('GET', '/whoami', { key: v4.key })).body.status_description,
        'Remote IP address is not found in the API key whitelist (127.0.0.1)',
      )
    })

    it('sees a key revoked on another instance once the lookup cache window has passed', async () => {
      const clock = new ManualClock()
      const other = await startTestApp(dialect, { shareDatabaseWith: t, clock, env: { HOSTAPI_AUTH_CACHE_MS: '1000' } })
      try {
        const k = await t.ctx.services.iam.createKey(a.accountId, a.userId)
        assert.equal((await other.request('GET', '/whoami', { key: k.key })).status, 200)
        await t.ctx.services.iam.revokeKey(a.accountId, String(k.id))
        clock.advance(1001)
        assert.equal(
          (await other.request('GET', '/whoami', { key: k.key })).body.status_description,
          'No valid API key set',
        )
      } finally {
        await other.close()
      }
    })

    it('answers a wrong method with 400 and an unknown path with 404, before authentication', async () => {
      const r = await t.request('DELETE', '/whoami')
      assert.deepEqual(r.body, { status: 400, status_description: 'Wrong request method' })
      const n = await t.request('GET', '/no/such/thing')
      assert.deepEqual(n.body, { status: 404, status_description: 'Endpoint not found' })
    })

    it('accepts trailing and doubled slashes', async () => {
      for (const p of ['/api/v2/whoami/', '/api/v2//whoami', '/api/v2//whoami/']) {
        assert.equal((await t.request('GET', p, { key: a.key })).status, 200, p)
      }
    })

    it('answers `SSL connection is required` on the plain-HTTP port, unless a trusted proxy says https', async () => {
      const plain = async (headers: Record<string, string>) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = http.request(
            `${t.server.httpUrl}/api/v2/whoami`,
            { headers: { 'api-key': a.key, ...headers } },
            (res) => {
              let body = ''
              res.on('data', (c) => (body += c))
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
            },
          )
          req.on('error', reject)
          req.end()
        })
      const r = await plain({})
      assert.equal(r.status, 400)
      assert.deepEqual(JSON.parse(r.body), { status: 400, status_description: 'SSL connection is required' })
      const proxied = await plain({ 'x-forwarded-proto': 'https' })
      assert.equal(proxied.status, 200)
    })

    it('answers `SSL connection is required` to plain HTTP on the HTTPS port, and still serves TLS there', async () => {
      const httpsPort = new URL(t.origin).port
      const plain = (method: string, headers: Record<string, string> = {}) =>
        new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
          const req = http.request(
            `http://127.0.0.1:${httpsPort}/api/v2/whoami`,
            { method, headers: { 'api-key': a.key, ...headers }, agent: false },
            (res) => {
              let body = ''
              res.on('data', (c) => (body += c))
              res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
            },
          )
          req.on('error', reject)
          req.end(method === 'POST' ? '{"a":1}' : undefined)
        })
      for (const method of ['GET', 'POST', 'DELETE']) {
        const r = await plain(method)
        assert.equal(r.status, 400, method)
        assert.match(String(r.headers['content-type']), /^application\/json/)
        assert.equal(r.headers.connection, 'close')
        assert.deepEqual(JSON.parse(r.body), { status: 400, status_description: 'SSL connection is required' })
      }
      // Not even a trusted proxy's word makes plain HTTP on the HTTPS port count as HTTPS.
      assert.equal((await plain('GET', { 'x-forwarded-proto': 'https' })).status, 400)
      assert.equal((await t.request('GET', '/whoami', { key: a.key })).status, 200)
    })

    it('drops a connection to the HTTPS port that is neither TLS nor HTTP, as TLS did before', async () => {
      const { port } = new URL(t.origin)
      const answer = await new Promise<Buffer>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(Buffer.alloc(16, 0x01)))
        const chunks: Buffer[] = []
        socket.on('data', (c: Buffer) => chunks.push(c))
        socket.on('close', () => resolve(Buffer.concat(chunks)))
        socket.on('error', reject)
      })
      assert.ok(!answer.toString('latin1').startsWith('HTTP/'))
    })

    it('points to the docs and the OpenAPI document from the server root and the API root, without a key', async () => {
      for (const p of ['/', '/api/v2', '/api/v2/']) {
        const r = await t.request('GET', p)
        assert.equal(r.status, 200, p)
        assert.match(String(r.headers['content-type']), /^application\/json/)
        assert.deepEqual(r.body, {
          status: 200,
          status_description: 'Request successful',
          data: { docs: '/docs', openapi: '/api/v2/openapi.json' },
        })
      }
      assert.equal((await t.request('GET', '/api/v2/openapi.json')).status, 200)
    })

    it('rate-limits per key with Retry-After and RateLimit headers', async () => {
      const limited = await startTestApp(dialect, { env: { HOSTAPI_RATE_LIMIT: '3' } })
      try {
        const acc = await limited.account()
        const answers = []
        for (let i = 0; i < 4; i++) answers.push(await limited.request('GET', '/whoami', { key: acc.key }))
        assert.deepEqual(
          answers.map((r) => r.status),
          [200, 200, 200, 429],
        )
        assert.equal(answers[0].headers['ratelimit-limit'], '3')
        assert.equal(answers[2].headers['ratelimit-remaining'], '0')
        const last = answers[3]
        assert.deepEqual(last.body, { status: 429, status_description: 'Rate limit exceeded' })
        assert.ok(Number(last.headers['retry-after']) >= 1)
        // Another key has its own budget.
        const other = await limited.account()
        assert.equal((await limited.request('GET', '/whoami', { key: other.key })).status, 200)
      } finally {
        await limited.close()
      }
    })
  })
})
