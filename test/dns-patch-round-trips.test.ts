// A PATCH of a record set on PostgreSQL costs one round trip once the records at its name were read: the record is
// checked against them and written in one call that holds only while the other types there are still those. Over
// record sets of every shape a PATCH meets (a name alone, the apex beside other types, a CNAME, the ACME challenge in
// a large zone), and the cases where what was read no longer holds: the answer is the one a fresh read gives.
// Concurrent PATCHes share their round trip and commit (group commit), each with its own audit row and answer.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import type { NormalisedRecord } from '../src/lib/dns/records.js'
import { writeRecordSetAt } from '../src/modules/domains/dns/zone-store.js'

interface Rec {
  type: string
  name: string
  value: string
  ttl?: number
}

/** The zone's records before the PATCHes, and the record set the PATCHes replace (its value varied per PATCH). */
const SHAPES: { what: string; zone: Rec[]; patch: (n: number) => Rec }[] = [
  {
    what: 'the ACME challenge in a zone of 200 records',
    zone: Array.from({ length: 200 }, (_, i) => ({ type: 'A', name: `host${i}`, value: `192.0.2.${i % 250}` })),
    patch: (n) => ({ type: 'TXT', name: '_acme-challenge', value: `token-${n}`, ttl: 120 }),
  },
  {
    what: 'the apex A beside MX and TXT',
    zone: [
      { type: 'MX', name: '@', value: '10 mail.example.net.' },
      { type: 'TXT', name: '@', value: 'v=spf1 -all' },
      { type: 'A', name: '@', value: '192.0.2.1' },
    ],
    patch: (n) => ({ type: 'A', name: '@', value: `192.0.2.${n + 2}` }),
  },
  {
    what: 'a CNAME alone at its name',
    zone: [{ type: 'CNAME', name: 'www', value: 'old.example.net.' }],
    patch: (n) => ({ type: 'CNAME', name: 'www', value: `cdn${n}.example.net.` }),
  },
  {
    what: 'a new name',
    zone: [],
    patch: (n) => ({ type: 'AAAA', name: 'v6', value: `2001:db8::${n + 1}` }),
  },
]

forEachDialect((dialect) => {
  if (dialect !== 'postgres') return
  describe('a DNS PATCH on PostgreSQL, in round trips', () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      // The key stays cached through a test: its lookups are no round trips of the PATCHes counted.
      t = await startTestApp(dialect, { env: { HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1', HOSTAPI_AUTH_CACHE_MS: '60000' } })
      a = await t.account('Round trips')
    })
    after(() => t.close())

    const patch = (d: string, record: Rec) => t.request('PATCH', `/domains/${d}/dns`, { key: a.key, body: { record } })
    const put = async (d: string, records: Rec[]) =>
      assert.equal((await t.request('PUT', `/domains/${d}/dns`, { key: a.key, body: { records } })).status, 200)
    const recordsAt = async (d: string, name: string) => {
      const r = await t.request('GET', `/domains/${d}/dns`, { key: a.key })
      const fqdn = name === '@' ? `${d}.` : `${name}.${d}.`
      return (r.body.data.records as Rec[])
        .filter((x) => x.name === fqdn)
        .map((x) => `${x.type} ${x.value}`)
        .sort()
    }
    /** The round trips of one PATCH (the fewest of three tries: a background job may send a query meanwhile). */
    const roundTripsOf = async (d: string, record: (n: number) => Rec, from: number) => {
      let fewest = Number.POSITIVE_INFINITY
      for (let n = from; n < from + 3; n++) {
        const before = t.ctx.roundTrips()
        const r = await patch(d, record(n))
        assert.equal(r.status, 200, r.text)
        fewest = Math.min(fewest, t.ctx.roundTrips() - before)
      }
      return fewest
    }

    for (const shape of SHAPES) {
      it(`costs one round trip once the records at the name were read: ${shape.what}`, async () => {
        const d = await makeDomain(t, a)
        await put(d, shape.zone)
        assert.equal((await patch(d, shape.patch(0))).status, 200)
        assert.equal(await roundTripsOf(d, shape.patch, 1), 1)
        const last = shape.patch(3)
        const others = shape.zone.filter((r) => r.name === last.name && r.type !== last.type)
        assert.deepEqual(
          await recordsAt(d, last.name),
          [...others, last].map((x) => `${x.type} ${x.value}`).sort(),
          'the set is the last PATCH, the other types kept',
        )
      })
    }

    it('writes concurrent PATCHes together: fewer round trips than PATCHes, each one committed with its audit row', async () => {
      const zones = [await makeDomain(t, a), await makeDomain(t, a)]
      const record = (n: number) => ({ type: 'TXT', name: '_acme-challenge', value: `c${n}`, ttl: 120 })
      for (const d of zones) assert.equal((await patch(d, record(0))).status, 200)
      const serials = async () =>
        (
          await t.ctx.db
            .selectFrom('domains')
            .select(['name', 'zone_serial'])
            .where('name', 'in', zones)
            .orderBy('name')
            .execute()
        ).map((r) => Number(r.zone_serial))
      const audited = () =>
        t.ctx.db
          .selectFrom('audit_log')
          .select('request_id')
          .where('account_id', '=', a.accountId)
          .where('method', '=', 'PATCH')
          .execute()
      const n = 40
      const all = (from: number) =>
        Promise.all(Array.from({ length: n }, (_, i) => patch(zones[i % 2], record(from + i))))
      // A first round opens the connections (kept alive) and reads the key: the second one's requests arrive together.
      await all(1)
      const serialsBefore = await serials()
      const auditedBefore = (await audited()).length
      const before = t.ctx.roundTrips()
      const answers = await all(n + 1)
      const roundTrips = t.ctx.roundTrips() - before
      assert.deepEqual(
        answers.map((r) => r.status),
        answers.map(() => 200),
      )
      assert.ok(roundTrips < n, `${n} concurrent PATCHes cost ${roundTrips} round trips`)
      assert.equal((await audited()).length, auditedBefore + n, 'one audit row per PATCH')
      const serialsAfter = await serials()
      for (const [i, s] of serialsAfter.entries())
        assert.ok(s >= (serialsBefore[i] ?? 0) + n / 2, 'the serial rose with every change')
      for (const d of zones) assert.equal((await recordsAt(d, '_acme-challenge')).length, 1)
    })

    it('makes each write of a failed group alone: one write in error fails only its own request', async () => {
      const d = await makeDomain(t, a)
      const name = `alone.${d}`
      const change = { now: new Date().toISOString(), serial: 1, others: '' }
      const write = (value: string, ttl: number) =>
        writeRecordSetAt(t.ctx.db, a.accountId, d, { type: 'TXT', name, value, ttl } as NormalisedRecord, change)
      // A TTL past the column's range fails its statement: made together with a good write in one turn.
      const [good, bad] = await Promise.allSettled([write('kept', 300), write('refused', 2 ** 40)])
      assert.deepEqual(good, { status: 'fulfilled', value: true })
      assert.equal(bad.status, 'rejected')
      assert.deepEqual(await recordsAt(d, 'alone'), ['TXT kept'])
    })

    it('answers as a fresh read does when another type came to the name since it was read', async () => {
      const d = await makeDomain(t, a)
      assert.equal((await patch(d, { type: 'CNAME', name: 'alias', value: 'one.example.net.' })).status, 200)
      assert.equal((await patch(d, { type: 'CNAME', name: 'alias', value: 'two.example.net.' })).status, 200)
      // The zone replaced: a TXT where the CNAME was.
      await put(d, [{ type: 'TXT', name: 'alias', value: 'here now' }])
      const r = await patch(d, { type: 'CNAME', name: 'alias', value: 'three.example.net.' })
      assert.equal(r.status, 400, r.text)
      assert.match(r.body.status_description, /CNAME/)
      assert.deepEqual(await recordsAt(d, 'alias'), ['TXT here now'])
      // And the other way round: the TXT gone, the CNAME fits again.
      await put(d, [])
      assert.equal((await patch(d, { type: 'CNAME', name: 'alias', value: 'four.example.net.' })).status, 200)
      assert.deepEqual(await recordsAt(d, 'alias'), ['CNAME four.example.net.'])
    })

    it('records the change event once a webhook endpoint listens, after the records at the name were read', async () => {
      const d = await makeDomain(t, a)
      const record = (n: number) => ({ type: 'TXT', name: 'hooked', value: `v${n}` })
      assert.equal((await patch(d, record(0))).status, 200)
      assert.equal((await patch(d, record(1))).status, 200)
      const hook = await t.request('POST', '/account/webhooks', {
        key: a.key,
        body: { url: 'https://127.0.0.1:9/events', events: ['dns.zone.changed'] },
      })
      assert.equal(hook.status, 200, hook.text)
      const events = () =>
        t.ctx.db
          .selectFrom('webhook_events')
          .select('payload')
          .where('account_id', '=', a.accountId)
          .where('type', '=', 'dns.zone.changed')
          .execute()
      const before = (await events()).length
      assert.equal((await patch(d, record(2))).status, 200)
      const after = await events()
      assert.equal(after.length, before + 1, 'the PATCH recorded its event')
      assert.equal(JSON.parse(after.at(-1)?.payload ?? '{}').data.domain, d)
    })
  })
})
