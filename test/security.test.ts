import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { dialects, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { fixtures, type FixtureResult } from './helpers/fixtures.js'
import { API_PREFIX } from '../src/http/constants.js'
import type { RouteEntry } from '../src/http/route-table.js'

// Generated from the route table: every customer route, every security case. A new route is covered
// as soon as it is registered; one without a permission area fails the app at start.
for (const dialect of dialects) {
  describe(`security cases for every route (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    let keys: { expired: string; otherIp: string; noPermissions: string }
    let routes: RouteEntry[]

    before(async () => {
      // Hundreds of wrong keys from one address on purpose: the failed-credential throttle (tested on its own) is off here.
      t = await startTestApp(dialect, { env: { HOSTAPI_AUTH_FAIL_LIMIT: '0' } })
      a = await t.account('Tenant A')
      b = await t.account('Tenant B')
      const iam = t.ctx.services.iam
      keys = {
        expired: (await iam.createKey(a.accountId, a.userId, { expiresAt: new Date(Date.now() - 60_000) })).key,
        otherIp: (await iam.createKey(a.accountId, a.userId, { allowedIps: ['192.0.2.10', '2001:db8::/48'] })).key,
        noPermissions: (await t.subUser(a, {})).key,
      }
      routes = t.server.app.routeTable.filter((r) => r.url.startsWith(API_PREFIX) && r.area !== 'public')
    })
    after(() => t.close())

    it('every route of the API declares a permission area', () => {
      const all = t.server.app.routeTable.filter((r) => r.url.startsWith(API_PREFIX))
      assert.ok(all.length > 0)
      for (const r of all) assert.ok(r.area, `${r.method} ${r.url} declares no area`)
    })

    it('every route with path parameters or a body names a fixture that exists', () => {
      for (const r of routes) {
        if (r.url.includes(':')) assert.ok(r.fixture && fixtures[r.fixture], `${r.method} ${r.url} needs a fixture`)
        else if (r.fixture) assert.ok(fixtures[r.fixture], `${r.method} ${r.url}: fixture ${r.fixture} does not exist`)
      }
    })

    // Fixtures are made once per route and owner: the cases only read them.
    const prepared = new Map<string, Promise<FixtureResult & { path: string }>>()
    const prepare = (r: RouteEntry, owner: TestAccount): Promise<FixtureResult & { path: string }> => {
      const id = `${owner.accountId} ${r.method} ${r.url}`
      if (!prepared.has(id)) prepared.set(id, make(r, owner))
      return prepared.get(id)!
    }
    const make = async (r: RouteEntry, owner: TestAccount): Promise<FixtureResult & { path: string }> => {
      const f: FixtureResult = r.fixture ? await fixtures[r.fixture](t, owner, r) : { params: {} }
      const path = r.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
        assert.ok(name in f.params, `fixture ${r.fixture} gives no value for :${name} of ${r.url}`)
        return encodeURIComponent(f.params[name])
      })
      return { ...f, path }
    }

    it('answers 401 for no key, an unknown key, an expired key and an address off the whitelist', async () => {
      for (const r of routes) {
        const f = await prepare(r, a)
        const call = (key?: string) => t.request(r.method, f.path, { key, body: f.body })
        const label = `${r.method} ${r.url}`
        const [none, unknown, expired, otherIp] = await Promise.all([call(), call('unknown-key-000000000000000000'), call(keys.expired), call(keys.otherIp)])
        assert.deepEqual(none.body, { status: 401, status_description: 'No valid API key set' }, label)
        assert.deepEqual(unknown.body, { status: 401, status_description: 'No valid API key set' }, label)
        assert.deepEqual(expired.body, { status: 401, status_description: 'API key has expired' }, label)
        assert.deepEqual(otherIp.body,
          { status: 401, status_description: 'Remote IP address is not found in the API key whitelist (127.0.0.1)' }, label)
      }
    })

    it('refuses a sub-user without the route\'s permission area', async () => {
      for (const r of routes.filter((x) => x.area !== 'any')) {
        const f = await prepare(r, a)
        const res = await t.request(r.method, f.path, { key: keys.noPermissions, body: f.body })
        const expected = r.area === 'vps'
          ? { status: 400, status_description: 'No access to this VPS' }
          : { status: 403, status_description: 'Access denied' }
        assert.deepEqual(res.body, expected, `${r.method} ${r.url}`)
        assert.equal(res.status, expected.status)
      }
    })

    it('treats another account\'s resource as missing', async () => {
      for (const r of routes.filter((x) => x.url.includes(':'))) {
        const f = await prepare(r, b)
        assert.ok(f.notFound, `fixture ${r.fixture} must say how ${r.url} answers a missing resource`)
        const res = await t.request(r.method, f.path, { key: a.key, body: f.body })
        assert.deepEqual(res.body, { status: f.notFound.status, status_description: f.notFound.text }, `${r.method} ${r.url}`)
      }
    })
  })
}
