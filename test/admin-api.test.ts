import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, request, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { NO_KEY, NO_TOKEN, startAdminTestApp } from './helpers/admin.js'

forEachDialect((dialect) => {
  describe(`admin API on the main listener (${dialect})`, () => {
    let t: TestApp
    let token: string
    let a: TestAccount
    const adm = (method: string, p: string, body?: unknown, tok = token) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${tok}` } })

    before(async () => {
      ;({ t, token, a } = await startAdminTestApp(dialect))
    })
    after(() => t.close())

    it('refuses every admin route without a valid admin token, customer keys included', async () => {
      const routes = t.server.app.routeTable.filter(
        (r) => r.url.startsWith('/admin/v1') && r.method !== 'HEAD' && !r.url.endsWith('/openapi.json'),
      )
      assert.ok(routes.length >= 15, `${routes.length} admin routes`)
      const revoked = await t.ctx.services.admin.createToken('old')
      await t.ctx.services.admin.revokeToken(revoked.prefix)
      for (const r of routes) {
        const p = r.url.replace(/:customer_number/, String(a.customerNumber)).replace(/:[a-z_]+/g, '1')
        const label = `${r.method} ${r.url}`
        assert.deepEqual((await t.request(r.method, p, { body: {} })).body, NO_TOKEN, label)
        assert.deepEqual((await t.request(r.method, p, { body: {}, key: a.key })).body, NO_TOKEN, label)
        assert.deepEqual(
          (await t.request(r.method, p, { body: {}, headers: { authorization: `Bearer ${a.key}` } })).body,
          NO_TOKEN,
          label,
        )
        assert.deepEqual(
          (await t.request(r.method, p, { body: {}, headers: { authorization: `Bearer ${revoked.token}` } })).body,
          NO_TOKEN,
          label,
        )
      }
    })

    it('never lets an admin token open a customer route', async () => {
      const routes = t.server.app.routeTable.filter(
        (r) => r.url.startsWith('/api/v2') && r.area !== 'public' && r.method !== 'HEAD',
      )
      assert.ok(routes.length > 50)
      for (const r of routes) {
        const p = r.url.replace(/:[a-z_]+/g, '1')
        assert.deepEqual((await t.request(r.method, p, { key: token, body: {} })).body, NO_KEY, `${r.method} ${r.url}`)
        assert.deepEqual(
          (await t.request(r.method, p, { headers: { authorization: `Bearer ${token}` }, body: {} })).body,
          NO_KEY,
          `${r.method} ${r.url}`,
        )
      }
      assert.deepEqual((await t.request('GET', '/whoami', { key: token })).body, NO_KEY)
      assert.deepEqual(
        (await t.request('GET', '/whoami', { headers: { authorization: `Bearer ${token}` } })).body,
        NO_KEY,
      )
      assert.equal((await t.request('GET', '/whoami', { key: a.key })).status, 200)
    })

    it('answers /healthz and /readyz without a key', async () => {
      assert.deepEqual((await t.request('GET', '/healthz')).body, { status: 200, status_description: 'OK' })
      const ready = await t.request('GET', '/readyz')
      assert.deepEqual(
        ready.body,
        { status: 200, status_description: 'Ready', data: { database: 'ok', migrations: 'ok' } },
        ready.text,
      )
    })

    it('documents the admin API in its own OpenAPI document, hidden from the customer one', async () => {
      const doc = await t.request('GET', '/admin/v1/openapi.json')
      assert.equal(doc.status, 200)
      assert.equal(doc.body.openapi, '3.1.0')
      const ops = new Set<string>()
      for (const item of Object.values(doc.body.paths as Record<string, Record<string, { operationId: string }>>)) {
        for (const op of Object.values(item)) ops.add(op.operationId)
      }
      for (const id of [
        'adminCreateAccount',
        'adminSuspendAccount',
        'adminCreateKey',
        'adminAuditLog',
        'adminRetryJob',
        'adminListOutbox',
        'adminMetrics',
      ]) {
        assert.ok(ops.has(id), id)
      }
      assert.ok(doc.body.paths['/accounts/{customer_number}/keys/{key}/whitelist'].put.requestBody)
      const adminRoutes = t.server.app.routeTable.filter(
        (r) => r.url.startsWith('/admin/v1') && r.method !== 'HEAD' && !r.url.endsWith('/openapi.json'),
      )
      for (const r of adminRoutes)
        assert.ok(r.operationId && ops.has(r.operationId), `${r.method} ${r.url} is documented`)
      assert.equal(ops.size, adminRoutes.length, 'operationIds are unique')
      const customer = await t.request('GET', '/api/v2/openapi.json')
      assert.ok(
        !Object.keys(customer.body.paths).some((p) => p.startsWith('/admin')),
        'no admin path in the customer document',
      )
      assert.ok(!JSON.stringify(customer.body).includes('adminCreateAccount'))
    })

    it('has no sandbox routes when sandbox mode is off', async () => {
      assert.deepEqual((await adm('POST', '/sandbox/reset')).body, {
        status: 404,
        status_description: 'Endpoint not found',
      })
    })
  })

  describe(`admin API on its own listener (${dialect})`, () => {
    let t: TestApp
    let token: string
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_ADMIN_PORT: '0', HOSTAPI_RATE_LIMIT: '2' } })
      token = (await t.ctx.services.admin.createToken()).token
    })
    after(() => t.close())

    it('serves the admin API only there, and counts rate-limit rejections', async () => {
      const origin = t.server.adminUrl.replace(/\/admin\/v1$/, '')
      assert.notEqual(origin, t.origin)
      const auth = { authorization: `Bearer ${token}` }
      assert.deepEqual((await t.request('GET', '/admin/v1/accounts', { headers: auth })).body, {
        status: 404,
        status_description: 'Endpoint not found',
      })
      const a = await t.account()
      for (let i = 0; i < 3; i++) await t.request('GET', '/whoami', { key: a.key })
      const list = await request(origin, 'GET', '/admin/v1/accounts', { headers: auth })
      assert.equal(list.status, 200, list.text)
      assert.equal(list.body.data.accounts[0].customer_number, a.customerNumber)
      assert.deepEqual((await request(origin, 'GET', '/admin/v1/accounts', { key: a.key })).body, NO_TOKEN)
      assert.equal((await request(origin, 'GET', '/readyz')).status, 200)
      assert.deepEqual((await request(origin, 'GET', '/api/v2/whoami', { key: a.key })).body, {
        status: 404,
        status_description: 'Endpoint not found',
      })
      assert.equal(
        (await request(origin, 'PUT', `/admin/v1/accounts/${a.customerNumber}/suspend`, { headers: auth })).status,
        200,
      )
      const audit = await request(origin, 'GET', `/admin/v1/audit?key_prefix=${token.slice(0, 12)}`, { headers: auth })
      assert.equal(audit.body.data.entries[0].path, `/admin/v1/accounts/${a.customerNumber}/suspend`)
      const metrics = await request(origin, 'GET', '/admin/v1/metrics', { headers: auth })
      assert.match(metrics.text, /^hostapi_rate_limit_rejections_total\{operation="whoami"\} 1$/m)
    })
  })
})
