// Generated over the DNS write routes of the route table: for each route's cases (valid changes and a breach of each
// rule), the dry run (`?test=1`) answers what the real write then answers, status and text, on the same zone. A new
// DNS write route fails here until it has cases.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import { API_PREFIX } from '../src/http/constants.js'

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** The records every case's zone starts with: a name with an A record and one with a CNAME. */
const START = [
  { type: 'A', name: 'www', value: '192.0.2.1', ttl: 300 },
  { type: 'A', name: 'www', value: '192.0.2.2', ttl: 300 },
  { type: 'CNAME', name: 'blog', value: 'ghs.googlehosted.com', ttl: 3600 },
  { type: 'TXT', name: '@', value: 'v=spf1 -all', ttl: 3600 },
]

interface Case {
  name: string
  /** The zone of the call: the account's own (`own`), another account's (`foreign`), or this text. */
  zone?: 'own' | 'foreign' | string
  body: unknown
}

const zoneText = (lines: string[]) => ['$ORIGIN @ORIGIN@.', '$TTL 3600', ...lines].join('\n')

/** The cases of each DNS write route, by `METHOD path`. */
const CASES: Record<string, Case[]> = {
  'PATCH /domains/:domain/dns': [
    { name: 'a new record set', body: { record: { type: 'A', name: 'new', value: '192.0.2.9', ttl: 300 } } },
    { name: 'a set replaced', body: { record: { type: 'A', name: 'www', value: '192.0.2.9' } } },
    { name: 'a set deleted', body: { record: { type: 'A', name: 'www', value: null } } },
    { name: 'a missing set deleted', body: { record: { type: 'MX', name: 'none', value: null } } },
    { name: 'the value left out', body: { record: { type: 'A', name: 'www' } } },
    { name: 'a CNAME beside an A', body: { record: { type: 'CNAME', name: 'www', value: 'example.com.' } } },
    { name: 'an A beside a CNAME', body: { record: { type: 'A', name: 'blog', value: '192.0.2.9' } } },
    { name: 'a CNAME at the apex', body: { record: { type: 'CNAME', name: '@', value: 'example.com.' } } },
    { name: 'an invalid value', body: { record: { type: 'A', name: 'x', value: '300.1.2.3' } } },
    { name: 'an unsupported type', body: { record: { type: 'WKS', name: 'x', value: 'x' } } },
    { name: 'no type', body: { record: { type: '', name: 'x', value: '192.0.2.9' } } },
    { name: 'an invalid name', body: { record: { type: 'A', name: 'a b', value: '192.0.2.9' } } },
    { name: 'an invalid name and value', body: { record: { type: 'A', name: 'a b', value: 'x' } } },
    { name: 'a TTL out of range', body: { record: { type: 'A', name: 'x', value: '192.0.2.9', ttl: 1 } } },
    { name: 'another account’s zone', zone: 'foreign', body: { record: { type: 'A', name: 'x', value: '192.0.2.9' } } },
    {
      name: 'another account’s zone, an invalid record',
      zone: 'foreign',
      body: { record: { type: 'A', name: 'x', value: 'x' } },
    },
    { name: 'an invalid zone name', zone: 'bad..name', body: { record: { type: 'A', name: 'x', value: '192.0.2.9' } } },
  ],
  'PUT /domains/:domain/dns': [
    { name: 'a new zone', body: { records: [{ type: 'A', name: '@', value: '192.0.2.9' }] } },
    { name: 'an empty zone', body: { records: [] } },
    {
      name: 'a CNAME beside an A',
      body: {
        records: [
          { type: 'A', name: 'x', value: '192.0.2.9' },
          { type: 'CNAME', name: 'x', value: 'example.com.' },
        ],
      },
    },
    { name: 'an invalid record', body: { records: [{ type: 'AAAA', name: 'x', value: '192.0.2.9' }] } },
    { name: 'another account’s zone', zone: 'foreign', body: { records: [] } },
  ],
  'DELETE /domains/:domain/dns': [
    { name: 'a set', body: { record: { type: 'A', name: 'www' } } },
    { name: 'one value of a set', body: { record: { type: 'A', name: 'www', value: '192.0.2.1' } } },
    { name: 'nothing matching', body: { record: { type: 'A', name: 'none', value: '192.0.2.1' } } },
    { name: 'a value invalid for the type', body: { record: { type: 'A', name: 'www', value: 'x' } } },
    { name: 'an unsupported type', body: { record: { type: 'WKS', name: 'www' } } },
    { name: 'an invalid name', body: { record: { type: 'A', name: 'a b' } } },
    { name: 'another account’s zone', zone: 'foreign', body: { record: { type: 'A', name: 'www' } } },
  ],
  'PUT /domains/:domain/dns/zone': [
    { name: 'a zone', body: { zone: zoneText(['www IN A 192.0.2.9', 'mail IN MX 10 mx.example.com.']) } },
    { name: 'a bad line', body: { zone: zoneText(['www IN A 192.0.2.9', 'www IN A nonsense']) } },
    { name: 'a CNAME beside an A', body: { zone: zoneText(['x IN A 192.0.2.9', 'x IN CNAME example.com.']) } },
    { name: 'another account’s zone', zone: 'foreign', body: { zone: zoneText(['www IN A 192.0.2.9']) } },
  ],
}

forEachDialect((dialect) => {
  describe(`a DNS change and its dry run answer alike (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('DNS parity A')
      b = await t.account('DNS parity B')
    })
    after(() => t.close())

    it('has cases for every DNS write route, and each case answers alike', async () => {
      const routes = t.server.app.routeTable
        .filter((r) => MUTATING.has(r.method) && r.url.startsWith(`${API_PREFIX}/domains/:domain/dns`))
        .map((r) => `${r.method} ${r.url.slice(API_PREFIX.length)}`)
      assert.ok(routes.length >= 4, 'the DNS write routes are in the table')
      assert.deepEqual(routes.filter((r) => !CASES[r]).sort(), [], 'DNS write routes without cases here')
      for (const route of routes) {
        const [method, url] = route.split(' ')
        for (const c of CASES[route]) {
          const own = await makeDomain(t, a)
          const foreign = await makeDomain(t, b)
          for (const [d, key] of [
            [own, a.key],
            [foreign, b.key],
          ]) {
            const put = await t.request('PUT', `/domains/${d}/dns`, { key, body: { records: START } })
            assert.equal(put.status, 200, put.text)
          }
          const zone = c.zone === 'foreign' ? foreign : c.zone === undefined || c.zone === 'own' ? own : c.zone
          const path = url.replace(':domain', zone)
          const body = JSON.parse(JSON.stringify(c.body).replaceAll('@ORIGIN@', zone))
          const before = await t.request('GET', `/domains/${own}/dns`, { key: a.key })
          const dry = await t.request(method, `${path}?test=1`, { key: a.key, body })
          const unchanged = await t.request('GET', `/domains/${own}/dns`, { key: a.key })
          assert.deepEqual(unchanged.body, before.body, `${route}, ${c.name}: the dry run changed nothing`)
          const real = await t.request(method, path, { key: a.key, body })
          assert.deepEqual(
            { status: dry.status, body: dry.body },
            { status: real.status, body: real.body },
            `${route}, ${c.name}: the dry run answers as the change`,
          )
        }
      }
    })
  })
})
