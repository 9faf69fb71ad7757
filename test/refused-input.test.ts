import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain } from './helpers/fixtures/domains.js'

// Found by the HTTP fuzz test: Ajv coerces the string `Infinity` (in a query, a path or a JSON body) to a number
// and then skips minimum/maximum; in a page or limit it reached the database and answered 500.
forEachDialect((dialect) => {
  describe(`input no field may hold is refused with a validation 400 (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let adminToken: string
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account()
      adminToken = (await t.ctx.services.admin.createToken('test')).token
    })
    after(() => t.close())

    it('answers 400 naming the field for Infinity, -Infinity and 1e999 in a query', async () => {
      for (const [name, value] of [
        ['limit', 'Infinity'],
        ['page', '-Infinity'],
        ['limit', '1e999'],
        ['page', 'Infinity'],
      ]) {
        const r = await t.request('GET', `/affiliate/commissions?${name}=${value}`, { key: a.key })
        assert.deepEqual(
          r.body,
          {
            status: 400,
            status_description: `Invalid ${name}: must be a finite number`,
            errors: [{ field: name, message: 'must be a finite number' }],
          },
          `${name}=${value}`,
        )
        const admin = await t.request('GET', `/admin/v1/outbox?${name}=${value}`, {
          headers: { authorization: `Bearer ${adminToken}` },
        })
        assert.equal(admin.status, 400, `admin outbox ${name}=${value}: ${admin.text}`)
      }
    })

    it('answers 400 naming the field for "Infinity" given for a number in a JSON body (Ajv coerces it too)', async () => {
      const domain = await makeDomain(t, a)
      const r = await t.request('PATCH', `/domains/${domain}/dns`, {
        key: a.key,
        body: { record: { type: 'A', name: 'www', value: '192.0.2.1', ttl: 'Infinity' } },
      })
      assert.deepEqual(r.body, {
        status: 400,
        status_description: 'Invalid record.ttl: must be a finite number',
        errors: [{ field: 'record.ttl', message: 'must be a finite number' }],
      })
    })

    // Found by the fuzz test on PostgreSQL: it refuses a NUL in text and an integer column compared with a larger number (500).
    it('answers 400 for a path number above the largest row id', async () => {
      for (const p of [
        '/certificates/99999999999999999999',
        '/domains/contacts/2147483648',
        '/domains/dns-templates/1e20',
      ]) {
        const r = await t.request('GET', p, { key: a.key })
        assert.deepEqual(
          r.body,
          {
            status: 400,
            status_description: 'Invalid id: must be <= 2147483647',
            errors: [{ field: 'id', message: 'must be <= 2147483647' }],
          },
          p,
        )
      }
      const admin = await t.request('GET', '/admin/v1/accounts/1e20', {
        headers: { authorization: `Bearer ${adminToken}` },
      })
      assert.equal(admin.body.status_description, 'Invalid customer_number: must be <= 2147483647')
    })

    it('answers 400 for a whole number beyond a 32-bit integer in a body (PostgreSQL refused to store or compare it)', async () => {
      const attach = await t.request('PUT', '/vps/floating-ips/1/attach', { key: a.key, body: { vps_id: 2147483648 } })
      assert.deepEqual(attach.body, {
        status: 400,
        status_description: 'Invalid vps_id: must be <= 2147483647',
        errors: [{ field: 'vps_id', message: 'must be <= 2147483647' }],
      })
      const commission = await t.request('POST', `/admin/v1/accounts/${a.customerNumber}/commissions`, {
        headers: { authorization: `Bearer ${adminToken}` },
        body: { order_nr: 1.2345678901234568e29, sale_amount: 0, commission_amount: 0 },
      })
      assert.equal(commission.status, 400, commission.text)
      assert.equal(commission.body.status_description, 'Invalid order_nr: must be <= 2147483647')
    })

    it('answers 400 for a NUL character in a path, a query or a body, before any route runs', async () => {
      const path = await t.request('GET', '/domains/extensions/a%00b', { key: a.key })
      assert.deepEqual(
        path.body,
        { status: 400, status_description: 'Invalid URL: NUL (%00) is not allowed' },
        path.text,
      )
      const query = await t.request('GET', '/account/tickets?search=a%00b', { key: a.key })
      assert.deepEqual(
        query.body,
        { status: 400, status_description: 'Invalid URL: NUL (%00) is not allowed' },
        query.text,
      )
      const body = await t.request('POST', '/domains/dns-templates', {
        key: a.key,
        body: { alias: 'a\u0000b', records: [] },
      })
      assert.deepEqual(
        body.body,
        { status: 400, status_description: 'Invalid JSON body: text must not contain NUL (\\u0000)' },
        body.text,
      )
    })

    // A zone import of deeply nested JSON over 1 MiB answered 500 (`Maximum call stack size exceeded` in the worker).
    it('answers 400 for a JSON body nested deeper than HOSTAPI_JSON_MAX_DEPTH, inline and in the worker (zone import)', async () => {
      const domain = await makeDomain(t, a)
      const deep = (levels: number, pad = 0) =>
        `{"zone":"${'x'.repeat(pad)}","n":${'['.repeat(levels)}${']'.repeat(levels)}}`
      const tooDeep = { status: 400, status_description: 'Invalid JSON body: nested deeper than 64 levels' }
      for (const [path, body] of [
        [`/domains/${domain}/dns/zone`, deep(600_000, 2 * 1024 * 1024)],
        [`/domains/${domain}/dns/zone`, deep(65, 2 * 1024 * 1024)],
        [`/domains/${domain}/dns`, deep(100_000)],
        [`/domains/${domain}/dns`, deep(65)],
      ] as const) {
        const r = await t.request('PUT', path, {
          key: a.key,
          rawBody: body,
          headers: { 'content-type': 'application/json' },
        })
        assert.deepEqual(r.body, tooDeep, `${path}, ${body.length} bytes`)
      }
      // The deepest allowed nesting is read and then refused by the schema, not by the parser.
      const r = await t.request('PUT', `/domains/${domain}/dns`, {
        key: a.key,
        rawBody: deep(63),
        headers: { 'content-type': 'application/json' },
      })
      assert.equal(r.status, 400)
      assert.notEqual(r.body.status_description, tooDeep.status_description)
    })

    it('answers 413 for a body holding more than HOSTAPI_JSON_MAX_VALUES values, or over the general limit (a zone import) more than 1,000', async () => {
      const domain = await makeDomain(t, a)
      const inline = await t.request('PUT', `/domains/${domain}/dns`, {
        key: a.key,
        body: { records: [], x: Array.from({ length: 100_000 }, () => ({})) },
      })
      assert.deepEqual(inline.body, { status: 413, status_description: 'Request body too large' })
      const keys = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i]))
      const r = await t.request('PUT', `/domains/${domain}/dns/zone`, { key: a.key, body: { zone: '', ...keys } })
      assert.deepEqual(r.body, { status: 413, status_description: 'Request body too large' })
      const ok = await t.request('PUT', `/domains/${domain}/dns/zone`, {
        key: a.key,
        body: { zone: `${'; a comment\n'.repeat(200_000)}www 3600 IN A 192.0.2.1\n` },
      })
      assert.equal(ok.status, 200, ok.text)
    })

    it('still takes finite numbers, 1e2 included', async () => {
      const r = await t.request('GET', '/affiliate/commissions?limit=1e2&page=1', { key: a.key })
      assert.equal(r.status, 200, r.text)
      assert.equal(r.body.data.pagination.limit, 100)
    })
  })
})
