// The PowerDNS driver's limits against a real pdns_server: pushes larger than its request size limit, record sets
// too large for any push refused at the API, parallel pushes, an outage that ends, and the zones' push state.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import pino from 'pino'
import fc from 'fast-check'
import { PowerDnsDriver } from '../src/drivers/dns/powerdns.js'
import { toPowerDnsRRsets, type PowerDnsRRset } from '../src/drivers/dns/powerdns-rrsets.js'
import { recordSetBytes } from '../src/lib/dns/record-set-size.js'
import { ManualClock } from '../src/clock.js'
import { DNS_PUSH_JOB } from '../src/modules/domains/dns/zone-delivery.js'
import { runAdmin } from '../src/cli/admin.js'
import { forEachDialect, startTestApp } from './helpers/app.js'
import { insertZone, queryUdp, txtOf } from './helpers/dns.js'
import { eventually, pace } from './helpers/wait.js'
import { MemoryZones } from './helpers/memory-zones.js'
import { describeWithPowerDns, startPowerDns, type PowerDns } from './helpers/powerdns.js'

const silent = pino({ level: 'silent' })
const text = (n: number, seed: number) => `${seed}-`.padEnd(n, 'abcdefghij')

describe('recordSetBytes', () => {
  it('is never less than the JSON of the record set as the PowerDNS driver sends it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 700 }), { minLength: 1, maxLength: 8 }),
        fc.constantFrom('a.example.nl', 'x_y.example.nl', 'example.nl'),
        (values, name) => {
          const zone = { id: 1, name: 'example.nl', serial: 1, nameserversJson: '[]' }
          const records = values.map((value) => ({ type: 'TXT', name, value, ttl: 3600 }))
          const sets = toPowerDnsRRsets(zone, records).filter((s) => s.type === 'TXT')
          for (const s of sets) {
            const sent = Buffer.byteLength(JSON.stringify({ ...s, changetype: 'REPLACE' }))
            assert.ok(recordSetBytes(name, values) >= sent, `${recordSetBytes(name, values)} < ${sent}`)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})

describeWithPowerDns('PowerDNS limits (a real pdns_server)', () => {
  let pdns: PowerDns
  const rrsets = async (zone: string) => {
    const res = await pdns.api('GET', `/zones/${zone}.`)
    assert.equal(res.status, 200)
    return (res.body as { rrsets: PowerDnsRRset[] }).rrsets
  }
  const env = () => ({
    HOSTAPI_DNS_DRIVER: 'powerdns',
    HOSTAPI_POWERDNS_URL: pdns.url,
    HOSTAPI_POWERDNS_API_KEY: pdns.apiKey,
    HOSTAPI_POWERDNS_PROBE_MS: '100',
  })

  before(async () => {
    pdns = await startPowerDns()
  })
  after(async () => {
    await pdns?.close()
  })

  it("pushes a zone larger than PowerDNS's request size limit (2 MiB by default) in parts, the SOA last", async () => {
    const zones = new MemoryZones()
    const driver = new PowerDnsDriver({ url: pdns.url, apiKey: pdns.apiKey, timeoutMs: 20_000 }, zones, silent)
    await driver.start()
    const z = 'big-push.nl'
    // 9,000 TXT records of 250 bytes at as many names: about 2.8 MB of JSON.
    const records = Array.from({ length: 9_000 }, (_, i) => ({ type: 'TXT', name: `r${i}.${z}`, value: text(250, i) }))
    const id = zones.add(z, { serial: 7, records })
    await driver.publish({ domain: z, kind: 'zone' })
    const sets = await rrsets(z)
    assert.equal(sets.filter((s) => s.type === 'TXT').length, 9_000)
    assert.ok(sets.find((s) => s.type === 'SOA')?.records[0].content.includes(' 7 '))
    assert.deepEqual(txtOf(await queryUdp(pdns.dnsPort, `r8999.${z}`, 'TXT')), [text(250, 8_999)])
    // A change of every record goes out in parts as well.
    zones.setRecords(
      id,
      records.map((r, i) => ({ ...r, value: text(250, i + 1) })),
    )
    await driver.publish({ domain: z, kind: 'zone' })
    assert.deepEqual(txtOf(await queryUdp(pdns.dnsPort, `r0.${z}`, 'TXT')), [text(250, 1)])
    await driver.stop()
  })

  it('runs parallel pushes of many zones without a failure (limited in number, one at a time per zone)', async () => {
    const zones = new MemoryZones()
    const driver = new PowerDnsDriver({ url: pdns.url, apiKey: pdns.apiKey, concurrency: 2 }, zones, silent)
    await driver.start()
    const names = Array.from({ length: 24 }, (_, i) => `parallel-${i}.nl`)
    for (const [i, z] of names.entries()) zones.add(z, { records: [{ type: 'A', name: z, value: `192.0.2.${i + 1}` }] })
    const results = await Promise.allSettled(names.map((z) => driver.publish({ domain: z, kind: 'zone' })))
    assert.deepEqual(
      results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
      [],
    )
    for (const z of names) assert.ok((await rrsets(z)).some((s) => s.type === 'A'))
    await driver.stop()
  })

  it('pushes at most `concurrency` zones at once, each zone one push at a time in the order asked', async () => {
    // A zone source that is slow to read a zone's records, and counts the reads at once: each push reads them once
    // (a push reads the zone's serial before and after, the records in between).
    const zones = new MemoryZones()
    const reading = new Map<string, number>()
    let most = 0
    const readOrder: string[] = []
    const read = zones.zoneRecords.bind(zones)
    zones.zoneRecords = async (zoneId) => {
      const key = (await zones.servedZone(zoneId))?.name ?? String(zoneId)
      reading.set(key, (reading.get(key) ?? 0) + 1)
      const all = [...reading.values()].reduce((a, b) => a + b, 0)
      most = Math.max(most, all)
      assert.equal(reading.get(key), 1, `two pushes of ${key} at once`)
      readOrder.push(key)
      await pace(30)
      reading.set(key, (reading.get(key) ?? 1) - 1)
      return read(zoneId)
    }
    const driver = new PowerDnsDriver({ url: pdns.url, apiKey: pdns.apiKey, concurrency: 3 }, zones, silent)
    await driver.start()
    const names = Array.from({ length: 6 }, (_, i) => `turns-${i}.nl`)
    for (const z of names) zones.add(z, { records: [{ type: 'A', name: z, value: '192.0.2.1' }] })
    // Four pushes of each zone, asked all at once.
    const asked = names.flatMap((z) => [z, z, z, z])
    await Promise.all(asked.map((z) => driver.publish({ domain: z, kind: 'zone' })))
    assert.equal(most, 3, 'the limit is reached and never passed')
    // First come, first served: the first push of every zone ran before any zone's second.
    assert.deepEqual(new Set(readOrder.slice(0, names.length)), new Set(names))
    for (const z of names) assert.equal(readOrder.filter((x) => x === z).length, 4)
    await driver.stop()
  })

  forEachDialect((dialect) => {
    describe(`through the app (${dialect})`, () => {
      it('refuses at the API a record set larger than one push may carry, naming the limit; splits the rest', async () => {
        const t = await startTestApp(dialect, { env: { ...env(), HOSTAPI_POWERDNS_MAX_BODY_BYTES: '65536' } })
        try {
          const owner = await t.account()
          const z = `set-limit-${dialect}.nl`
          await insertZone(t.ctx.db, owner.accountId, z)
          // 400 TXT values of 200 bytes at one name: about 95 KB as one RRset, over the 64 KiB limit.
          const oneName = Array.from({ length: 400 }, (_, i) => ({
            type: 'TXT',
            name: 'big',
            value: text(200, i),
            ttl: 300,
          }))
          const refused = await t.request('PUT', `/api/v2/domains/${z}/dns`, {
            key: owner.key,
            body: { records: oneName },
          })
          assert.equal(refused.status, 400, refused.text)
          assert.match(
            refused.body.status_description,
            new RegExp(
              `^DNS record set TXT big\\.${z.replace('.', '\\.')} is too large: it takes \\d+ bytes in a change to the DNS server, which accepts at most 64512 bytes$`,
            ),
          )
          assert.equal(await t.ctx.jobs.drain(), 0)
          // The same records at 400 names fit: they are pushed in several requests.
          const spread = oneName.map((r, i) => ({ ...r, name: `n${i}` }))
          const put = await t.request('PUT', `/api/v2/domains/${z}/dns`, { key: owner.key, body: { records: spread } })
          assert.equal(put.status, 200, put.text)
          await t.ctx.jobs.drain()
          assert.equal((await rrsets(z)).filter((s) => s.type === 'TXT').length, 400)
        } finally {
          await t.close()
        }
      })

      it("sends queued pushes within seconds once PowerDNS is back, and shows each zone's push state", async () => {
        const clock = new ManualClock()
        const t = await startTestApp(dialect, { env: env(), clock })
        const token = (await t.ctx.services.admin.createToken('dns')).token
        const sync = async (domain: string) => {
          const res = await t.request('GET', `/admin/v1/dns/sync?domain=${domain}`, {
            headers: { authorization: `Bearer ${token}` },
          })
          assert.equal(res.status, 200, res.text)
          return res.body.data.zones[0]
        }
        try {
          const owner = await t.account()
          const z = `outage-${dialect}.nl`
          await insertZone(t.ctx.db, owner.accountId, z, { records: [{ type: 'A', name: z, value: '192.0.2.1' }] })
          const patch = (value: string) =>
            t.request('PATCH', `/api/v2/domains/${z}/dns`, {
              key: owner.key,
              body: { record: { type: 'A', name: 'www', value, ttl: 300 } },
            })
          assert.equal((await patch('192.0.2.2')).status, 200)
          await t.ctx.jobs.drain()
          const synced = await sync(z)
          assert.equal(synced.in_sync, true, JSON.stringify(synced))
          assert.equal(synced.last_error, null)

          await pdns.stop()
          try {
            assert.equal((await patch('192.0.2.3')).status, 200)
            // Several failed attempts: the next one is due only after a backoff on the (stopped) test clock.
            clock.advance(1_000)
            await t.ctx.jobs.drain()
            clock.advance(2_000)
            await t.ctx.jobs.drain()
            const failing = await sync(z)
            assert.equal(failing.in_sync, false)
            assert.ok(failing.pending_since, JSON.stringify(failing))
            assert.match(failing.last_error, /PowerDNS .* cannot be reached/)
            const [job] = await t.ctx.db
              .selectFrom('jobs')
              .selectAll()
              .where('kind', '=', DNS_PUSH_JOB)
              .where('status', '=', 'queued')
              .execute()
            assert.ok(new Date(job.run_at) > clock.now(), 'the push waits for its backoff')
            // The resync command exits non-zero when a zone failed.
            const out: string[] = []
            const sink = { write: (s: string) => out.push(s) }
            assert.equal(await runAdmin(t.ctx, ['dns', 'resync', '--domain', z], sink, sink), 1)
            assert.match(out.join(''), new RegExp(`^${z.replace('.', '\\.')}\\tfailed: `))
          } finally {
            await pdns.start()
          }
          // Without moving the clock: PowerDNS answers again, so the queued push is due now.
          await eventually(async () => (await t.ctx.jobs.drain([DNS_PUSH_JOB])) > 0, {
            what: 'the queued push runs',
            timeoutMs: 5_000,
          })
          assert.deepEqual(txtOf(await queryUdp(pdns.dnsPort, `www.${z}`, 'A')).length >= 0, true)
          const a = await queryUdp(pdns.dnsPort, `www.${z}`, 'A')
          assert.deepEqual(
            (a.answers ?? []).map((x) => (x as unknown as { data: string }).data),
            ['192.0.2.3'],
          )
          const back = await sync(z)
          assert.equal(back.in_sync, true, JSON.stringify(back))
          assert.equal(back.last_error, null)
          assert.equal(back.pending_since, null)
        } finally {
          await t.close()
        }
      })
    })
  })
})
