import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { fixtures, type FixtureResult } from './helpers/fixtures.js'
import { bodyIdCases } from './helpers/fixtures/body-ids.js'
import { API_PREFIX } from '../src/http/constants.js'
import type { RouteEntry } from '../src/http/route-table.js'

// Generated from the route table: every customer route, every security case. A new route is covered
// as soon as it is registered; one without a permission area fails the app at start.
forEachDialect((dialect) => {
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
        const [none, unknown, expired, otherIp] = await Promise.all([
          call(),
          call('unknown-key-000000000000000000'),
          call(keys.expired),
          call(keys.otherIp),
        ])
        assert.deepEqual(none.body, { status: 401, status_description: 'No valid API key set' }, label)
        assert.deepEqual(unknown.body, { status: 401, status_description: 'No valid API key set' }, label)
        assert.deepEqual(expired.body, { status: 401, status_description: 'API key has expired' }, label)
        assert.deepEqual(
          otherIp.body,
          { status: 401, status_description: 'Remote IP address is not found in the API key whitelist (127.0.0.1)' },
          label,
        )
      }
    })

    it("refuses a sub-user without the route's permission area", async () => {
      for (const r of routes.filter((x) => x.area !== 'any')) {
        const f = await prepare(r, a)
        const res = await t.request(r.method, f.path, { key: keys.noPermissions, body: f.body })
        const expected =
          r.area === 'vps'
            ? { status: 400, status_description: 'No access to this VPS' }
            : { status: 403, status_description: 'Access denied' }
        assert.deepEqual(res.body, expected, `${r.method} ${r.url}`)
        assert.equal(res.status, expected.status)
      }
    })

    it("treats another account's resource as missing", async () => {
      for (const r of routes.filter((x) => x.url.includes(':'))) {
        const f = await prepare(r, b)
        assert.ok(f.notFound, `fixture ${r.fixture} must say how ${r.url} answers a missing resource`)
        const res = await t.request(r.method, f.path, { key: a.key, body: f.body })
        assert.deepEqual(
          res.body,
          { status: f.notFound.status, status_description: f.notFound.text },
          `${r.method} ${r.url}`,
        )
      }
    })

    it("answers a missing resource exactly as another account's", async () => {
      for (const r of routes.filter((x) => x.url.includes(':'))) {
        const f = await prepare(r, b)
        const path = r.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
          const value = f.params[name]
          if (/^\d+$/.test(value)) return '987654321'
          return value.includes('.') ? 'missing-resource-4242.nl' : 'missing-resource-4242'
        })
        const res = await t.request(r.method, path, { key: a.key, body: f.body })
        assert.deepEqual(
          res.body,
          { status: f.notFound!.status, status_description: f.notFound!.text },
          `${r.method} ${path}`,
        )
        assert.equal(res.status, f.notFound!.status, `${r.method} ${path}`)
      }
    })

    it('has foreign-id cases for every route whose body names a resource of the account', async () => {
      const doc = (await t.request('GET', `${API_PREFIX}/openapi.json`)).body
      const withIds = routesWithBodyIds(doc)
      assert.ok(withIds.length > 0)
      const known = new Set(routes.map((r) => `${r.method} ${r.url}`))
      for (const route of withIds) {
        assert.ok(known.has(route), `${route} is not in the route table`)
        assert.ok(
          bodyIdCases[route],
          `${route} takes ids in its body: add its cases to test/helpers/fixtures/body-ids.ts`,
        )
      }
    })

    it("answers a body naming another account's resource exactly as one naming a missing resource", async () => {
      for (const [route, make] of Object.entries(bodyIdCases)) {
        for (const c of await make(t, a, b)) {
          const label = `${route} ${JSON.stringify(c.foreign)}`
          const foreign = await t.request(c.method, c.path, { key: a.key, body: c.foreign })
          const missing = await t.request(c.method, c.path, { key: a.key, body: c.missing })
          assert.ok(foreign.status >= 400 && foreign.status < 500, `${label}: ${foreign.status} ${foreign.text}`)
          const text = (r: typeof foreign, from?: string) =>
            from === undefined ? r.text : r.text.split(from).join('<id>')
          assert.deepEqual(
            { status: foreign.status, text: text(foreign, c.echo?.[0]) },
            { status: missing.status, text: text(missing, c.echo?.[1]) },
            label,
          )
        }
      }
    })
  })
})

const ID_NAME = /_ids?$/
const ROLE = new Set(['owner', 'admin', 'tech', 'billing'])
// Ids of the catalog (the same for every account) and of a part of the path's own resource.
const NOT_ACCOUNT_IDS = new Set(['product_id', 'image_id', 'cart_id'])

/**
 * The routes (`METHOD url` as in the route table) whose request body names something an account owns: a property
 * `…_id`/`…_ids`, a contact role given as a number, or a nameserver profile alias (`nameserver`).
 */
function routesWithBodyIds(doc: {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>
  components?: { schemas?: Record<string, unknown> }
}): string[] {
  const components = doc.components?.schemas ?? {}
  type S = {
    $ref?: string
    type?: string | string[]
    properties?: Record<string, S>
    items?: S
    anyOf?: S[]
    oneOf?: S[]
    allOf?: S[]
  }
  const resolve = (s: S): S => (s.$ref ? ((components[s.$ref.split('/').pop()!] as S) ?? {}) : s)
  const isNumberish = (s: S): boolean => {
    const r = resolve(s)
    const types = Array.isArray(r.type) ? r.type : r.type ? [r.type] : []
    return (
      types.includes('integer') ||
      types.includes('number') ||
      [...(r.anyOf ?? []), ...(r.oneOf ?? [])].some(isNumberish)
    )
  }
  const names = (s: S, seen: Set<S>): boolean => {
    const r = resolve(s)
    if (seen.has(r)) return false
    seen.add(r)
    for (const [name, p] of Object.entries(r.properties ?? {})) {
      if (ID_NAME.test(name) && !NOT_ACCOUNT_IDS.has(name)) return true
      if (ROLE.has(name) && isNumberish(p)) return true
      if (name === 'nameserver') return true
      if (names(p, seen)) return true
    }
    return [r.items, ...(r.anyOf ?? []), ...(r.oneOf ?? []), ...(r.allOf ?? [])].some(
      (x) => x !== undefined && names(x, seen),
    )
  }
  const out: string[] = []
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const schema = op.requestBody?.content['application/json']?.schema
      if (schema && names(schema as S, new Set()))
        out.push(`${method.toUpperCase()} ${p.replace(/\{([^}]+)\}/g, ':$1')}`)
    }
  }
  return out
}
