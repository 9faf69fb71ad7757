import assert from 'node:assert/strict'
import fs from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { after, before, describe, it } from 'node:test'
import { RECORD_TYPES } from '../src/lib/dns/records.js'
import { insertZone } from './helpers/dns.js'
import { startTestApp, type TestAccount, type TestApp } from './helpers/app.js'

// The documents as an integrator reads them, generated over every operation of both: each failure an operation
// can answer shows examples with the real texts, each request body an example the server accepts.

interface Media {
  schema?: unknown
  example?: unknown
  examples?: Record<string, { value: { status: number; status_description: string; errors?: unknown[] } }>
}
interface Operation {
  operationId: string
  parameters?: { in: string; name: string }[]
  requestBody?: { content: Record<string, Media> }
  responses: Record<string, { description: string; content?: Record<string, Media> }>
}
type Doc = { paths: Record<string, Record<string, Operation>> }

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  )

/** The path with every `{param}` filled in: a domain for `{domain}`, `1` otherwise. */
const filled = (path: string, domain: string) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'domain' ? domain : '1'))

describe('OpenAPI documents: examples of every failure and every body', () => {
  let t: TestApp
  let a: TestAccount
  let customer: Doc
  let admin: Doc
  const domain = 'examples-test.nl'
  before(async () => {
    t = await startTestApp('sqlite', { env: { HOSTAPI_RATE_LIMIT: '100000' } })
    a = await t.account()
    await insertZone(t.ctx.db, a.accountId, domain)
    customer = (await t.request('GET', '/api/v2/openapi.json')).body
    admin = (await t.request('GET', '/admin/v1/openapi.json')).body
  })
  after(() => t.close())

  it('every error answer of every operation (customer and admin) has examples with its status and a text', () => {
    for (const [name, doc] of [
      ['customer', customer],
      ['admin', admin],
    ] as const) {
      assert.ok(operations(doc).length > 40, `${name} document has its operations`)
      for (const { path, method, op } of operations(doc)) {
        for (const [status, answer] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue
          const examples = Object.values(answer.content?.['application/json']?.examples ?? {})
          assert.ok(examples.length > 0, `${name} ${method} ${path} ${status} has no example`)
          for (const { value } of examples) {
            assert.equal(value.status, Number(status), `${method} ${path} ${status}`)
            assert.ok(value.status_description.length > 0)
          }
        }
      }
    }
  })

  it('every request body of the customer API has an example, and the server accepts it (?test=1)', async () => {
    const withBody = operations(customer).filter(({ op }) => op.requestBody)
    assert.ok(withBody.length > 30)
    for (const { path, method, op } of withBody) {
      const media = op.requestBody?.content['application/json']
      assert.ok(media && (media.example !== undefined || media.examples), `${method} ${path} has no body example`)
      const body = media.example ?? Object.values(media.examples ?? {})[0]?.value
      const r = await t.request(method, `${filled(path, domain)}?test=1`, { key: a.key, body })
      // Validation answers 400 with `errors`; anything else (a 404 for the placeholder id, 200) passed the schema.
      assert.ok(!(r.status === 400 && r.body.errors), `${op.operationId}: ${JSON.stringify(r.body)}`)
    }
  })

  it('every request body of the admin API (sandbox routes included) has an example its schema accepts', () => {
    // The published document: the served one leaves out the sandbox routes outside sandbox mode.
    const published = JSON.parse(fs.readFileSync(new URL('../openapi-admin.json', import.meta.url), 'utf8')) as Doc
    const ajv = new Ajv2020({ strict: false })
    addFormats.default(ajv)
    const withBody = operations(published).filter(({ op }) => op.requestBody)
    assert.ok(withBody.length > 15)
    assert.ok(withBody.some(({ path }) => path.startsWith('/sandbox/')))
    for (const { path, method, op } of withBody) {
      const media = op.requestBody?.content['application/json']
      const schema = media?.schema as { examples?: unknown[] } | undefined
      const body = media?.example ?? Object.values(media?.examples ?? {})[0]?.value ?? schema?.examples?.[0]
      assert.ok(body !== undefined, `admin ${method} ${path} (${op.operationId}) has no body example`)
      const validate = ajv.compile(schema ?? {})
      assert.ok(validate(body), `${op.operationId}: ${JSON.stringify(validate.errors)}`)
    }
  })

  it('the server accepts every admin body example (sandbox mode, the reset last)', async () => {
    const published = JSON.parse(fs.readFileSync(new URL('../openapi-admin.json', import.meta.url), 'utf8')) as Doc
    const sandbox = await startTestApp('sqlite', { env: { HOSTAPI_RATE_LIMIT: '100000', HOSTAPI_SANDBOX: '1' } })
    try {
      const owner = await sandbox.account()
      const token = (await sandbox.ctx.services.admin.createToken('examples')).token
      const values: Record<string, string> = {
        customer_number: String(owner.customerNumber),
        name: 'premium-example.nl',
        extension: 'nl',
      }
      const withBody = operations(published)
        .filter(({ op }) => op.requestBody)
        .sort((x, y) => Number(x.op.operationId === 'sandboxReset') - Number(y.op.operationId === 'sandboxReset'))
      for (const { path, method, op } of withBody) {
        const media = op.requestBody?.content['application/json']
        const schema = media?.schema as { examples?: unknown[] } | undefined
        const body = media?.example ?? Object.values(media?.examples ?? {})[0]?.value ?? schema?.examples?.[0]
        const url = `/admin/v1${path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '1')}`
        const r = await sandbox.request(method, url, { headers: { authorization: `Bearer ${token}` }, body })
        // Validation answers 400 with `errors`; anything else (a 404 for a placeholder id, 2xx) passed the schema.
        assert.ok(r.status !== 401 && !(r.status === 400 && r.body.errors), `${op.operationId}: ${r.status} ${r.text}`)
      }
    } finally {
      await sandbox.close()
    }
  })

  it("a body's validation example is the answer the server gives to an empty body", async () => {
    let checked = 0
    for (const { path, method, op } of operations(customer)) {
      const examples = op.responses['400']?.content?.['application/json']?.examples ?? {}
      const missing = Object.values(examples).find((e) => e.value.errors)
      if (!op.requestBody) continue
      assert.ok(missing || !(op.requestBody.content['application/json'].schema as { required?: unknown }).required)
      if (!missing) continue
      const r = await t.request(method, `${filled(path, domain)}?test=1`, { key: a.key, body: {} })
      assert.deepEqual(r.body, missing.value, `${op.operationId}`)
      checked++
    }
    assert.ok(checked > 20)
  })

  it('Idempotency-Key and test are declared parameters', async () => {
    const idempotent = t.server.app.routeTable.filter((r) => r.url.startsWith('/api/v2') && r.idempotent)
    assert.ok(idempotent.length >= 3)
    const byId = new Map(operations(customer).map(({ op }) => [op.operationId, op]))
    for (const route of idempotent) {
      const names = (byId.get(route.operationId ?? '')?.parameters ?? []).map((p) => `${p.in}:${p.name}`)
      assert.ok(names.includes('header:Idempotency-Key'), `${route.operationId} declares Idempotency-Key`)
    }
    for (const { path, method, op } of operations(customer)) {
      if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue
      const names = (op.parameters ?? []).map((p) => `${p.in}:${p.name}`)
      assert.ok(names.includes('query:test'), `${method} ${path} declares test`)
    }
  })

  it('DNS record types are an enum in the document; any case is still accepted and an unknown type keeps its text', async () => {
    const dns = customer.paths['/api/v2/domains/{domain}/dns']
    const schema = dns.patch.requestBody?.content['application/json'].schema as {
      properties: { record: { properties: { type: { enum: string[] } } } }
    }
    assert.deepEqual(schema.properties.record.properties.type.enum, [...RECORD_TYPES])
    const path = `/api/v2/domains/${domain}/dns?test=1`
    const lower = await t.request('PATCH', path, {
      key: a.key,
      body: { record: { type: 'a', name: 'www', value: '192.0.2.1' } },
    })
    assert.equal(lower.status, 200)
    const unknown = await t.request('PATCH', path, { key: a.key, body: { record: { type: 'FOO', value: 'x' } } })
    assert.equal(unknown.status, 400)
    assert.match(unknown.body.status_description, /^Invalid DNS record FOO: unsupported type \(use one of A, AAAA/)
  })

  it('the docs page offers both documents and shows operation ids', async () => {
    const r = await t.request('GET', '/docs/static/swagger-initializer.js')
    assert.equal(r.status, 200)
    assert.match(r.text, /"url":"\/api\/v2\/openapi\.json"/)
    assert.match(r.text, /"url":"\/admin\/v1\/openapi\.json"/)
    assert.match(r.text, /"displayOperationId":true/)
  })
})
