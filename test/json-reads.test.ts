import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import { makeTicket } from './helpers/fixtures/account.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { API_PREFIX } from '../src/http/constants.js'
import { ok } from '../src/http/schemas.js'
import { type Page, pageOf, pagination } from '../src/lib/paging.js'
import { sortRecords } from '../src/lib/dns/zone-file.js'
import { fqdnWithDot, RECORD_TYPES } from '../src/lib/dns/records.js'
import { ymdhm, ymdhms } from '../src/clock.js'

/**
 * The reads the database builds as one JSON text (ARCHITECTURE.md, "Reads as one JSON value") answer byte for byte
 * what the route's own serializer (Fastify's fast-json-stringify, from the route's response schema) writes for the
 * answer as the routes built it before: the rows read, mapped in code, serialized. Data is generated (odd strings:
 * quotes, backslashes, control characters, unicode beyond the BMP; big and negative numbers; names that sort
 * oddly) and written straight into the tables, past the API's own checks, as hostile data may already be there.
 * This is what keeps the answers to their declared schemas now that the routes send text.
 */

// Any text a column may hold: PostgreSQL refuses NUL in text, and a lone surrogate cannot be stored as UTF-8.
const text = fc
  .oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\t', '\u0001', '\u001f', '\u007f', '\u2028', 'é', '😀', '/') }),
  )
  .map((s) => s.replaceAll('\u0000', ''))
  .filter((s) => !/\p{Cs}/u.test(s))
// Tags a filter names (lower case, as the service lowers the filter), odd ones among them.
const TAGS = ['web', 'a"b', 'x\\y', '😀', 'ü', 'é\n']
const tag = fc.constantFrom(...TAGS, 'Web')
/** Whether the list answers `Page out of range` for `page` of `total` items (pagination throws it). */
const outOfRange = (page: Page, total: number): boolean => {
  try {
    pagination(page, total)
    return false
  } catch {
    return true
  }
}
const PAGE_OUT_OF_RANGE = JSON.stringify({ status: 400, status_description: 'Page out of range' })
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })
// Labels as names are stored (ASCII, lower case and more), in an order the sort must follow: `*`, `-`, `_`, digits.
const label = fc.string({
  unit: fc.constantFrom('a', 'b', 'z', '0', '9', '-', '_', '*', 'A'),
  minLength: 1,
  maxLength: 4,
})
const isoTime = fc
  .date({ min: new Date(0), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((d) => d.toISOString())

forEachDialect((dialect) => {
  describe(`reads built by the database answer as the route's serializer (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    const serializer = SerializerSelector()()
    const serialize = (operationId: string, data: unknown): string => {
      const route = t.server.app.routeTable.find((r) => r.operationId === operationId && r.method === 'GET')
      assert.ok(route?.schema?.response)
      const write = serializer({
        schema: route.schema.response['200'],
        method: 'GET',
        url: route.url,
        httpStatus: '200',
      })
      return write(ok(data))
    }
    const get = async (path: string) => {
      const r = await t.request('GET', `${API_PREFIX}${path}`, { key: a.key })
      assert.equal(r.status, 200, r.text)
      assert.match(String(r.headers['content-type']), /^application\/json/)
      return r.text
    }

    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_RESPONSE_CACHE_MB: '0' } })
      a = await t.account('Odd data')
    })
    after(() => t?.close())

    it('GET /domains/{d}/dns: records of any value, name, type and TTL, in the zone order', async () => {
      const zone = await makeDomain(t, a)
      const { id } = await t.ctx.db
        .selectFrom('domains')
        .select('id')
        .where('name', '=', zone)
        .executeTakeFirstOrThrow()
      const record = fc.record({
        type: fc.constantFrom(...RECORD_TYPES, 'TYPE65534', 'a'),
        name: fc.oneof(
          fc.constant(zone),
          fc.array(label, { minLength: 1, maxLength: 3 }).map((l) => `${l.join('.')}.${zone}`),
        ),
        value: text,
        ttl: int32,
      })
      await fc.assert(
        fc.asyncProperty(fc.array(record, { maxLength: 12 }), async (records) => {
          await t.ctx.db.deleteFrom('dns_records').where('domain_id', '=', id).execute()
          const now = new Date().toISOString()
          if (records.length)
            await t.ctx.db
              .insertInto('dns_records')
              .values(records.map((r) => ({ ...r, domain_id: id, created_at: now })))
              .execute()
          const rows = await t.ctx.db
            .selectFrom('dns_records')
            .select(['type', 'name', 'value', 'ttl'])
            .where('domain_id', '=', id)
            .orderBy('id')
            .execute()
          const view = sortRecords(zone, rows).map((r) => ({
            type: r.type,
            name: fqdnWithDot(r.name),
            value: r.value,
            ttl: r.ttl,
          }))
          assert.equal(await get(`/domains/${zone}/dns`), serialize('getDnsRecords', { domain: zone, records: view }))
        }),
        { numRuns: 25 },
      )
    })

    it('GET /domains: any name, date, status and tags, whole and paged', async () => {
      const b = await t.account('Odd domains')
      const ids: number[] = []
      for (let i = 0; i < 6; i++) {
        const name = await makeDomain(t, b)
        ids.push(
          (await t.ctx.db.selectFrom('domains').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id,
        )
      }
      const domain = fc.record({
        name: text,
        renewal_date: text,
        status: text,
        status_id: int32,
        tags: fc.array(fc.oneof(tag, text), { maxLength: 3 }),
      })
      // A filter by tags, or none: the names of some of the pool's tags, as a client writes them.
      const filter = fc.option(fc.subarray(TAGS, { minLength: 1 }), { nil: undefined })
      const query = fc.option(
        fc.record({ page: fc.integer({ min: 1, max: 3 }), limit: fc.integer({ min: 1, max: 4 }) }),
        { nil: undefined },
      )
      await fc.assert(
        fc.asyncProperty(fc.array(domain, { minLength: 6, maxLength: 6 }), query, filter, async (domains, q, tags) => {
          for (const [i, d] of domains.entries()) {
            // Names are unique across the service.
            const changes = { ...d, name: `${i} ${ids[i]} ${d.name}`, tags: JSON.stringify(d.tags) }
            await t.ctx.db.updateTable('domains').set(changes).where('id', '=', ids[i]).execute()
          }
          const wanted = (tags ?? []).map((x) => x.trim().toLowerCase()).filter(Boolean)
          const kept = domains.flatMap((d, i) =>
            !wanted.length || d.tags.some((x) => wanted.includes(x)) ? [{ d, i }] : [],
          )
          const all = kept.map(({ d, i }) => ({
            id: ids[i],
            domain: `${i} ${ids[i]} ${d.name}`,
            renewal_date: d.renewal_date,
            status: d.status,
            status_id: d.status_id,
            tags: d.tags,
          }))
          const params = new URLSearchParams()
          if (q) for (const [k, v] of Object.entries(q)) params.set(k, String(v))
          if (tags) params.set('tags', tags.join(','))
          const r = await t.request('GET', `${API_PREFIX}/domains?${params}`, { key: b.key })
          if (!q) return assert.equal(r.text, serialize('listDomains', { domains: all }))
          const page = pageOf(q)
          if (outOfRange(page, all.length)) return assert.equal(r.text, PAGE_OUT_OF_RANGE)
          const data = {
            domains: all.slice(page.offset, page.offset + page.limit),
            pagination: pagination(page, all.length),
          }
          assert.equal(r.text, serialize('listDomains', data))
        }),
        { numRuns: 20 },
      )
    })

    it('GET /account/tickets: any subject, creator, department, status and time, paged', async () => {
      const c = await t.account('Odd tickets')
      const numbers: number[] = []
      for (let i = 0; i < 5; i++) numbers.push(await makeTicket(t, c))
      const ticket = fc.record({ subject: text, creator: text, department: text, status: text, last_updated: isoTime })
      const query = fc.record({ page: fc.integer({ min: 1, max: 2 }), limit: fc.integer({ min: 1, max: 5 }) })
      await fc.assert(
        fc.asyncProperty(fc.array(ticket, { minLength: 5, maxLength: 5 }), query, async (tickets, q) => {
          for (const [i, tk] of tickets.entries())
            await t.ctx.db.updateTable('tickets').set(tk).where('ticket_number', '=', numbers[i]).execute()
          const rows = await t.ctx.db
            .selectFrom('tickets')
            .selectAll()
            .where('account_id', '=', c.accountId)
            .orderBy('last_updated', 'desc')
            .orderBy('id', 'desc')
            .execute()
          const page = pageOf(q)
          const r = await t.request('GET', `${API_PREFIX}/account/tickets?page=${q.page}&limit=${q.limit}`, {
            key: c.key,
          })
          if (outOfRange(page, rows.length)) return assert.equal(r.text, PAGE_OUT_OF_RANGE)
          const data = {
            tickets: rows.slice(page.offset, page.offset + page.limit).map((tk) => ({
              ticket_number: tk.ticket_number,
              last_updated: ymdhms(new Date(tk.last_updated)),
              subject: tk.subject,
              status: tk.status,
              creator: tk.creator,
              department: tk.department,
            })),
            pagination: pagination(page, rows.length),
          }
          assert.equal(r.status, 200, r.text)
          assert.equal(r.text, serialize('listTickets', data))
        }),
        { numRuns: 20 },
      )
    })

    it('GET /vps: any name, hostname, status, product, location, addresses and time', async () => {
      const d = await t.account('Odd VPS')
      const ids = [await makeVps(t, d), await makeVps(t, d)]
      const vps = fc.record({
        name: text,
        hostname: text,
        status: text,
        product_id: text,
        location: text,
        ipv4: text,
        ipv6: text,
        created_at: isoTime,
      })
      await fc.assert(
        fc.asyncProperty(fc.array(vps, { minLength: 2, maxLength: 2 }), async (list) => {
          for (const [i, v] of list.entries())
            await t.ctx.db.updateTable('vps').set(v).where('id', '=', ids[i]).execute()
          const data = {
            vps: list.map((v, i) => ({
              id: ids[i],
              name: v.name,
              hostname: v.hostname,
              status: v.status,
              product: v.product_id,
              location: v.location,
              ipv4: v.ipv4,
              ipv6: v.ipv6,
              created: ymdhm(new Date(v.created_at)),
            })),
          }
          const r = await t.request('GET', `${API_PREFIX}/vps`, { key: d.key })
          assert.equal(r.status, 200, r.text)
          assert.equal(r.text, serialize('listVps', data))
        }),
        { numRuns: 20 },
      )
    })
  })
})
