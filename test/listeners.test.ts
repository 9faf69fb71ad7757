import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { loadConfig, ConfigError } from '../src/config/config.js'
import { plainRequest, request, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { NO_TOKEN } from './helpers/admin.js'

const NOT_FOUND = { status: 404, status_description: 'Endpoint not found' }
const SSL_REQUIRED = { status: 400, status_description: 'SSL connection is required' }

/** Whether a TCP connection to host:port is accepted. */
const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host, port }, () => {
      s.destroy()
      resolve(true)
    })
    s.on('error', () => resolve(false))
  })

describe('admin listener address (HOSTAPI_ADMIN_HOST)', () => {
  it('defaults to 127.0.0.1 whatever HOSTAPI_HOST is, and needs HOSTAPI_ADMIN_PORT and an IP address', () => {
    assert.equal(loadConfig({ HOSTAPI_HOST: '0.0.0.0', HOSTAPI_ADMIN_PORT: '9444' }).admin.host, '127.0.0.1')
    assert.equal(loadConfig({ HOSTAPI_ADMIN_HOST: '::1', HOSTAPI_ADMIN_PORT: '9444' }).admin.host, '::1')
    assert.throws(
      () => loadConfig({ HOSTAPI_ADMIN_HOST: 'admin.internal', HOSTAPI_ADMIN_PORT: '9444' }),
      (e: unknown) => e instanceof ConfigError && /HOSTAPI_ADMIN_HOST must be an IP address/.test(e.message),
    )
    assert.throws(
      () => loadConfig({ HOSTAPI_ADMIN_HOST: '10.0.0.1' }),
      (e: unknown) => e instanceof ConfigError && /HOSTAPI_ADMIN_HOST needs HOSTAPI_ADMIN_PORT/.test(e.message),
    )
  })
})

describe('listeners: public HTTPS, plain HTTP behind a proxy, admin on its own address', () => {
  let t: TestApp
  let a: TestAccount
  let token: string
  let admin: string
  let plain: string
  before(async () => {
    t = await startTestApp('sqlite', {
      env: {
        HOSTAPI_HOST: '127.0.0.1',
        HOSTAPI_ADMIN_HOST: '127.0.0.2',
        HOSTAPI_ADMIN_PORT: '0',
        HOSTAPI_HTTP_PORT: '0',
        HOSTAPI_TRUSTED_PROXIES: '127.0.0.1',
      },
    })
    a = await t.account()
    token = (await t.ctx.services.admin.createToken()).token
    admin = new URL(t.server.adminUrl).origin
    plain = t.server.httpUrl!
  })
  after(() => t.close())

  it('binds the admin listener to HOSTAPI_ADMIN_HOST only', async () => {
    const url = new URL(t.server.adminUrl)
    assert.equal(url.hostname, '127.0.0.2')
    assert.equal(await accepts('127.0.0.2', Number(url.port)), true)
    assert.equal(await accepts('127.0.0.1', Number(url.port)), false)
    assert.equal(
      (await request(admin, 'GET', '/admin/v1/accounts', { headers: { authorization: `Bearer ${token}` } })).status,
      200,
    )
  })

  it('answers /admin/v1 and /metrics on the public listeners as unknown paths', async () => {
    const auth = { authorization: `Bearer ${token}` }
    for (const path of ['/admin/v1/accounts', '/admin/v1/metrics', '/admin/v1/openapi.json', '/metrics']) {
      assert.deepEqual((await t.request('GET', path, { headers: auth })).body, NOT_FOUND, path)
      // Through the plain-HTTP listener as the trusted proxy sends it.
      const proxied = await plainRequest(plain, path, { ...auth, 'x-forwarded-proto': 'https' })
      assert.deepEqual(proxied.body, NOT_FOUND, path)
    }
    assert.equal((await t.request('GET', '/whoami', { key: a.key })).status, 200)
  })

  it('answers the health checks on every listener, the plain-HTTP one without proxy headers included', async () => {
    for (const path of ['/healthz', '/readyz']) {
      for (const origin of [t.origin, admin])
        assert.equal((await request(origin, 'GET', path)).status, 200, `${origin}${path}`)
      const r = await plainRequest(plain, path)
      assert.equal(r.status, 200, `${plain}${path}`)
      assert.equal((r.body as { status: number }).status, 200)
    }
    // Everything else on the plain-HTTP listener still needs a trusted proxy that says https.
    assert.deepEqual((await plainRequest(plain, '/api/v2/whoami', { 'api-key': a.key })).body, SSL_REQUIRED)
  })

  it('serves /metrics on the admin listener behind the admin token', async () => {
    assert.deepEqual((await request(admin, 'GET', '/metrics')).body, NO_TOKEN)
    const r = await request(admin, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } })
    assert.equal(r.status, 200, r.text)
    assert.match(String(r.headers['content-type']), /^text\/plain/)
    assert.match(r.text, /^hostapi_http_requests_total\{operation="whoami",method="GET",status="200"\} \d+$/m)
  })
})
