import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp, type TestApp } from './helpers/app.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

// Generated from the route table: every path, with each method it does not serve, answers `Wrong request method`
// before authentication, also where a parametric route of that method would catch the path (`GET /domains/order`
// against `GET /domains/:domain`).
describe('wrong request method on every path', () => {
  let t: TestApp
  const served = new Map<string, Set<string>>()
  before(async () => {
    t = await startTestApp('sqlite')
    for (const r of t.server.app.routeTable) {
      const methods = served.get(r.url) ?? new Set<string>()
      methods.add(r.method)
      // Fastify serves HEAD wherever GET is served (the table leaves the API's HEAD routes out).
      if (r.method === 'GET') methods.add('HEAD')
      served.set(r.url, methods)
    }
  })
  after(() => t.close())

  it('answers 400 `Wrong request method` for every path and method the route table does not pair', async () => {
    assert.ok(served.size > 100)
    const wrong: string[] = []
    let checked = 0
    for (const [url, methods] of served) {
      const path = url.replace(/:[A-Za-z_]+|\*/g, 'sample')
      for (const method of METHODS) {
        if (methods.has(method)) continue
        checked++
        const r = await t.request(method, path)
        const text = method === 'HEAD' ? null : (r.body as { status_description?: string }).status_description
        if (r.status !== 400 || (text !== null && text !== 'Wrong request method')) {
          wrong.push(`${method} ${path}: ${r.status} ${text ?? ''}`)
        }
      }
    }
    assert.ok(checked > 400, `${checked} pairs`)
    assert.deepEqual(wrong, [])
  })

  it('tells a wrong method from a parameter with a key too, and leaves real parameter values alone', async () => {
    const a = await t.account()
    for (const [method, path] of [
      ['GET', '/domains/order'],
      ['PUT', '/domains/nameservers'],
      ['GET', '/vps/order'],
      ['GET', '/certificates/csr'],
      // `/vps/floating-ips/:id` (DELETE) is more specific than `/vps/:id/backups` (GET) for this path.
      ['GET', '/vps/floating-ips/backups'],
    ]) {
      const r = await t.request(method, path, { key: a.key })
      assert.deepEqual(r.body, { status: 400, status_description: 'Wrong request method' }, `${method} ${path}`)
    }
    const dns = await t.request('GET', '/domains/order/dns', { key: a.key })
    assert.notEqual(dns.body.status_description, 'Wrong request method')
    const vps = await t.request('GET', '/vps/orders', { key: a.key })
    assert.notEqual(vps.body.status_description, 'Wrong request method')
  })
})
