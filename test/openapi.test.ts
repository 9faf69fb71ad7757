import { describe, it, after, before } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { openapiDocuments, serialiseOpenapi } from '../src/openapi-document.js'
import { startTestApp, type TestApp } from './helpers/app.js'

describe('OpenAPI document', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp('sqlite')
  })
  after(() => t.close())

  it('the committed openapi.json and openapi-admin.json match the code (run `npm run openapi` after changing a route)', async () => {
    const { customer, admin } = await openapiDocuments()
    const committed = (file: string) => fs.readFileSync(new URL(`../${file}`, import.meta.url), 'utf8')
    assert.equal(committed('openapi.json'), serialiseOpenapi(customer))
    assert.equal(committed('openapi-admin.json'), serialiseOpenapi(admin))
  })

  it('is served at /api/v2/openapi.json without a key, with every customer operation in it', async () => {
    const r = await t.request('GET', '/api/v2/openapi.json')
    assert.equal(r.status, 200)
    assert.equal(r.body.openapi, '3.1.0')
    const ops = new Set<string>()
    for (const item of Object.values(r.body.paths as Record<string, Record<string, { operationId?: string }>>)) {
      for (const op of Object.values(item)) if (op.operationId) ops.add(op.operationId)
    }
    const routes = t.server.app.routeTable.filter((x) => x.url.startsWith('/api/v2') && x.area !== 'public')
    for (const route of routes)
      assert.ok(
        route.operationId && ops.has(route.operationId),
        `${route.method} ${route.url} has no documented operationId`,
      )
    assert.equal(ops.size, routes.length, 'operationIds are unique')
  })

  it('serves the docs page', async () => {
    const r = await t.request('GET', '/docs/')
    assert.equal(r.status, 200)
    assert.match(r.text, /swagger/i)
  })
})
