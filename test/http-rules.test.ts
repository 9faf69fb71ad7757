import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { ok, pageOf, pagination, PageQuery } from '../src/http/schemas.js'

// Body parsing, validation and pagination are shared rules; they are exercised here through a
// probe module mounted like any other, so they are tested before the area routes depend on them.
const probeRoutes = async (base: import('fastify').FastifyInstance) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.put(
    '/probe/echo',
    {
      config: { area: 'any' },
      schema: {
        hide: true,
        body: Type.Object({ name: Type.String({ minLength: 1 }), ttl: Type.Optional(Type.Integer({ minimum: 60 })) }),
      },
    },
    async (req) => ok(req.body),
  )
  let orders = 0
  app.post(
    '/probe/order',
    {
      config: { area: 'any', idempotent: true },
      schema: { hide: true, body: Type.Object({ item: Type.String() }) },
    },
    async (req) => ok({ order_id: ++orders, item: req.body.item, at: process.hrtime.bigint().toString() }),
  )
  app.delete('/probe/echo', { config: { area: 'any' }, schema: { hide: true } }, async (req) =>
    ok({ body: req.body ?? null }),
  )
  app.get(
    '/probe/items',
    { config: { area: 'any' }, schema: { hide: true, querystring: Type.Object(PageQuery) } },
    async (req) => {
      const page = pageOf(req.query)
      return ok({ pagination: pagination(page, 30) })
    },
  )
}

describe('shared HTTP rules', () => {
  let t: TestApp
  let a: TestAccount
  before(async () => {
    t = await startTestApp('sqlite', { env: { HOSTAPI_BODY_LIMIT: '2048' }, routes: [probeRoutes] })
    a = await t.account()
  })
  after(() => t.close())

  it('parses a JSON body without a Content-Type, and with a wrong one', async () => {
    const none = await t.request('PUT', '/probe/echo', { key: a.key, rawBody: '{"name":"x"}' })
    assert.equal(none.status, 200)
    assert.deepEqual(none.body.data, { name: 'x' })
    const wrong = await t.request('PUT', '/probe/echo', {
      key: a.key,
      rawBody: '{"name":"y"}',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    assert.deepEqual(wrong.body.data, { name: 'y' })
  })

  it('parses a JSON body on DELETE, with and without a Content-Type', async () => {
    const none = await t.request('DELETE', '/probe/echo', { key: a.key, rawBody: '{"record":{"type":"TXT"}}' })
    assert.deepEqual(none.body.data, { body: { record: { type: 'TXT' } } })
    const json = await t.request('DELETE', '/probe/echo', { key: a.key, body: { a: 1 } })
    assert.deepEqual(json.body.data, { body: { a: 1 } })
  })

  it('answers malformed JSON, invalid fields and oversized bodies in the envelope', async () => {
    const bad = await t.request('PUT', '/probe/echo', { key: a.key, rawBody: '{"name":' })
    assert.deepEqual(bad.body, { status: 400, status_description: 'Invalid JSON body' })
    const missing = await t.request('PUT', '/probe/echo', { key: a.key, body: {} })
    assert.equal(missing.status, 400)
    assert.equal(missing.body.status_description, 'Missing name')
    const low = await t.request('PUT', '/probe/echo', { key: a.key, body: { name: 'x', ttl: 5 } })
    assert.equal(low.body.status_description, 'Invalid ttl: must be >= 60')
    assert.deepEqual(low.body.errors, [{ field: 'ttl', message: 'must be >= 60' }])
    const big = await t.request('PUT', '/probe/echo', { key: a.key, body: { name: 'x'.repeat(4096) } })
    assert.deepEqual(big.body, { status: 413, status_description: 'Request body too large' })
    assert.ok(!bad.text.includes(' at '), 'no stack trace')
  })

  it('paginates and answers `Page out of range`', async () => {
    const first = await t.request('GET', '/probe/items', { key: a.key })
    assert.deepEqual(first.body.data.pagination, { page: 1, limit: 25, total: 30, total_pages: 2 })
    const last = await t.request('GET', '/probe/items?page=3&limit=10', { key: a.key })
    assert.deepEqual(last.body.data.pagination, { page: 3, limit: 10, total: 30, total_pages: 3 })
    const out = await t.request('GET', '/probe/items?page=4&limit=10', { key: a.key })
    assert.deepEqual(out.body, { status: 400, status_description: 'Page out of range' })
    const zero = await t.request('GET', '/probe/items?page=0', { key: a.key })
    assert.equal(zero.body.status_description, 'Invalid page: must be >= 1')
    const huge = await t.request('GET', '/probe/items?limit=101', { key: a.key })
    assert.equal(huge.body.status_description, 'Invalid limit: must be <= 100')
    const text = await t.request('GET', '/probe/items?page=abc', { key: a.key })
    assert.equal(text.body.status_description, 'Invalid page: must be integer')
  })

  it('records every mutating call in the audit log', async () => {
    await t.request('PUT', '/probe/echo/', {
      key: a.key,
      body: { name: 'audit' },
      headers: { 'x-request-id': 'audit-1' },
    })
    await t.request('PUT', '/probe/echo', { key: a.key, body: {}, headers: { 'x-request-id': 'audit-2' } })
    await t.request('GET', '/whoami', { key: a.key, headers: { 'x-request-id': 'audit-3' } })
    const rows = await t.ctx.db
      .selectFrom('audit_log')
      .selectAll()
      .where('request_id', 'in', ['audit-1', 'audit-2', 'audit-3'])
      .orderBy('id')
      .execute()
    assert.deepEqual(
      rows.map((r) => [r.request_id, r.method, r.path, r.status, r.account_id, r.key_prefix, r.ip]),
      [
        ['audit-1', 'PUT', '/api/v2/probe/echo/', 200, a.accountId, a.key.slice(0, 8), '127.0.0.1'],
        ['audit-2', 'PUT', '/api/v2/probe/echo', 400, a.accountId, a.key.slice(0, 8), '127.0.0.1'],
      ],
    )
  })

  it('honours Idempotency-Key on ordering routes: replay byte for byte, 409 for another body', async () => {
    const h = { 'idempotency-key': 'order-abc-1' }
    const first = await t.request('POST', '/probe/order', { key: a.key, body: { item: 'x' }, headers: h })
    assert.equal(first.status, 200)
    const again = await t.request('POST', '/probe/order', { key: a.key, body: { item: 'x' }, headers: h })
    assert.equal(again.text, first.text)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    const other = await t.request('POST', '/probe/order', { key: a.key, body: { item: 'y' }, headers: h })
    assert.deepEqual(other.body, { status: 409, status_description: 'Idempotency key reused with a different request' })
    const without = await t.request('POST', '/probe/order', { key: a.key, body: { item: 'x' } })
    assert.notEqual(without.body.data.order_id, first.body.data.order_id)
    // Keys are per account: another account may use the same key for its own request.
    const b = await t.account()
    const theirs = await t.request('POST', '/probe/order', { key: b.key, body: { item: 'x' }, headers: h })
    assert.notEqual(theirs.body.data.order_id, first.body.data.order_id)
    // An invalid request claims no key.
    const invalid = await t.request('POST', '/probe/order', {
      key: a.key,
      body: {},
      headers: { 'idempotency-key': 'order-abc-2' },
    })
    assert.equal(invalid.status, 400)
    const valid = await t.request('POST', '/probe/order', {
      key: a.key,
      body: { item: 'z' },
      headers: { 'idempotency-key': 'order-abc-2' },
    })
    assert.equal(valid.status, 200)
  })

  it('echoes a sane X-Request-Id and replaces an unusable one', async () => {
    const mine = await t.request('GET', '/whoami', { key: a.key, headers: { 'x-request-id': 'abc-123' } })
    assert.equal(mine.headers['x-request-id'], 'abc-123')
    const bad = await t.request('GET', '/whoami', { key: a.key, headers: { 'x-request-id': 'bad id with spaces' } })
    assert.notEqual(bad.headers['x-request-id'], 'bad id with spaces')
  })
})
