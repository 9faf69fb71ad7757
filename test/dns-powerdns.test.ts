// The PowerDNS driver against a real pdns_server (gsqlite3): pushes, removal, an outage and resync after drift; in the app: dns-powerdns-app.
import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import type { Packet } from 'dns-packet'
import pino from 'pino'
import type { ZoneDrift, ZoneSource } from '../src/drivers/dns/dns.js'
import { DnsPushError, PowerDnsDriver } from '../src/drivers/dns/powerdns.js'
import type { PowerDnsRRset } from '../src/drivers/dns/powerdns-rrsets.js'
import { dig, queryUdp, txtOf } from './helpers/dns.js'
import { MemoryZones } from './helpers/memory-zones.js'
import { describeWithPowerDns, startPowerDns, type PowerDns } from './helpers/powerdns.js'

const silent = pino({ level: 'silent' })
const rcodeOf = (p: Packet) => (p as Packet & { rcode: string }).rcode
const dataOf = (p: Packet, type: string) =>
  (p.answers ?? []).filter((a) => a.type === type).map((a) => (a as unknown as { data: unknown }).data)
/** An RRset change as an operator would send it straight to PowerDNS. */
const replace = (name: string, type: string, content: string, ttl = 60) => ({
  name,
  type,
  ttl,
  changetype: 'REPLACE',
  records: [{ content, disabled: false }],
})
const serialOf = (p: Packet) => (p.answers![0] as unknown as { data: { serial: number } }).data.serial

describeWithPowerDns('PowerDNS driver (a real pdns_server)', () => {
  let pdns: PowerDns
  let zones: MemoryZones
  let driver: PowerDnsDriver
  const q = (name: string, type: string) => queryUdp(pdns.dnsPort, name, type)
  const rrsets = async (zone: string) => {
    const res = await pdns.api('GET', `/zones/${zone}.`)
    assert.equal(res.status, 200)
    return (res.body as { rrsets: PowerDnsRRset[] }).rrsets
  }
  const contentOf = async (zone: string, name: string, type: string) =>
    (await rrsets(zone))
      .find((s) => s.name === name && s.type === type)
      ?.records.map((r) => r.content)
      .sort()

  before(async () => {
    pdns = await startPowerDns()
    zones = new MemoryZones()
    driver = new PowerDnsDriver({ url: pdns.url, apiKey: pdns.apiKey, timeoutMs: 2000 }, zones, silent)
    await driver.start()
  })
  after(async () => {
    await driver?.stop()
    await pdns?.close()
  })

  it('pushes every record type in forms PowerDNS keeps as they are (resync then finds no drift)', async () => {
    const z = 'every-type.nl'
    zones.add(z, {
      serial: 2026112401,
      records: [
        { type: 'A', name: z, value: '192.0.2.1' },
        { type: 'AAAA', name: `www.${z}`, value: '2001:db8::1' },
        { type: 'CNAME', name: `shop.${z}`, value: 'shops.example.com.' },
        { type: 'MX', name: z, value: '10 mail.every-type.nl.' },
        { type: 'MX', name: `nomail.${z}`, value: '0 .' },
        { type: 'NS', name: `sub.${z}`, value: 'ns.other.example.' },
        { type: 'DS', name: `sub.${z}`, value: `12345 8 2 ${'ef'.repeat(32)}` },
        { type: 'SRV', name: `_sip._tcp.${z}`, value: '10 5 5060 sip.every-type.nl.' },
        { type: 'TXT', name: z, value: 'v=spf1 "quoted" \\ é -all' },
        { type: 'TXT', name: `long.${z}`, value: 'x'.repeat(300) },
        { type: 'CAA', name: z, value: '0 iodef "mailto:a\\"b@every-type.nl"' },
        { type: 'TLSA', name: `_443._tcp.${z}`, value: `3 1 1 ${'ab'.repeat(32)}` },
        { type: 'SSHFP', name: `host.${z}`, value: `4 2 ${'cd'.repeat(32)}` },
        { type: 'A', name: `*.${z}`, value: '192.0.2.9' },
      ],
    })
    await driver.publish({ domain: z, kind: 'zone' })
    assert.equal(serialOf(await q(z, 'SOA')), 2026112401)
    assert.deepEqual(dataOf(await q(z, 'A'), 'A'), ['192.0.2.1'])
    assert.deepEqual(dataOf(await q(`anything.${z}`, 'A'), 'A'), ['192.0.2.9'])
    assert.deepEqual(txtOf(await q(z, 'TXT')), ['v=spf1 "quoted" \\ é -all'])
    assert.deepEqual(txtOf(await q(`long.${z}`, 'TXT')), ['x'.repeat(300)])
    assert.match(await dig(pdns.dnsPort, '+short', `nomail.${z}`, 'MX'), /^0 \.$/m)
    assert.match(await dig(pdns.dnsPort, '+short', `_sip._tcp.${z}`, 'SRV'), /^10 5 5060 sip\.every-type\.nl\.$/m)
    const zone = (await pdns.api('GET', `/zones/${z}.`)).body as { account: string; kind: string; soa_edit_api: string }
    assert.deepEqual([zone.account, zone.kind, zone.soa_edit_api], ['hostapi', 'Native', ''])
    assert.deepEqual(await driver.resync([z]), [])
  })

  it('puts, changes and deletes records at the names a records change names, leaving other names alone', async () => {
    const z = 'records.nl'
    const id = zones.add(z, { serial: 1, records: [{ type: 'A', name: `keep.${z}`, value: '192.0.2.1' }] })
    await driver.publish({ domain: z, kind: 'zone' })
    // Something at another name that only a whole-zone push or resync would remove.
    await pdns.api('PATCH', `/zones/${z}.`, { rrsets: [replace(`foreign.${z}.`, 'A', '203.0.113.1')] })

    // A records change for a zone PowerDNS lacks pushes the whole zone.
    const late = 'late.nl'
    zones.add(late, { records: [{ type: 'A', name: late, value: '192.0.2.3' }] })
    await driver.publish({ domain: late, kind: 'records', names: [`www.${late}`] })
    assert.deepEqual(dataOf(await q(late, 'A'), 'A'), ['192.0.2.3'])

    zones.addRecord(id, { type: 'A', name: `www.${z}`, value: '192.0.2.10' })
    zones.addRecord(id, { type: 'TXT', name: `www.${z}`, value: 'hello' })
    await driver.publish({ domain: z, kind: 'records', names: [`www.${z}`] })
    assert.deepEqual(dataOf(await q(`www.${z}`, 'A'), 'A'), ['192.0.2.10'])
    assert.deepEqual(txtOf(await q(`www.${z}`, 'TXT')), ['hello'])
    assert.equal(serialOf(await q(z, 'SOA')), 3)

    zones.deleteRecords(id, (r) => r.name === `www.${z}` && r.type === 'A')
    zones.addRecord(id, { type: 'A', name: `www.${z}`, value: '192.0.2.11', ttl: 300 })
    await driver.publish({ domain: z, kind: 'records', names: [`WWW.${z.toUpperCase()}.`] })
    assert.deepEqual(await contentOf(z, `www.${z}.`, 'A'), ['192.0.2.11'])
    assert.equal((await rrsets(z)).find((s) => s.name === `www.${z}.` && s.type === 'A')?.ttl, 300)

    zones.deleteRecords(id, (r) => r.name === `www.${z}`)
    await driver.publish({ domain: z, kind: 'records', names: [`www.${z}`] })
    assert.equal(rcodeOf(await q(`www.${z}`, 'A')), 'NXDOMAIN')
    assert.deepEqual(dataOf(await q(`keep.${z}`, 'A'), 'A'), ['192.0.2.1'])
    assert.deepEqual(dataOf(await q(`foreign.${z}`, 'A'), 'A'), ['203.0.113.1'])
    assert.equal(serialOf(await q(z, 'SOA')), zones.serial(id))
  })

  it('replaces the whole zone on a zone change (and on a records change without names)', async () => {
    const z = 'replace.nl'
    const id = zones.add(z, { records: [{ type: 'A', name: `old.${z}`, value: '192.0.2.1' }] })
    await driver.publish({ domain: z, kind: 'records' })
    assert.deepEqual(dataOf(await q(`old.${z}`, 'A'), 'A'), ['192.0.2.1'])
    await pdns.api('PATCH', `/zones/${z}.`, { rrsets: [replace(`foreign.${z}.`, 'A', '203.0.113.1')] })
    zones.setRecords(id, [
      { type: 'A', name: `new.${z}`, value: '192.0.2.2' },
      { type: 'MX', name: z, value: '5 mx.example.com.' },
    ])
    zones.setNameservers(id, ['ns1.elsewhere.example', 'ns2.elsewhere.example'])
    await driver.publish({ domain: z, kind: 'zone' })
    assert.deepEqual((await rrsets(z)).map((s) => `${s.name} ${s.type}`).sort(), [
      `new.${z}. A`,
      `${z}. MX`,
      `${z}. NS`,
      `${z}. SOA`,
    ])
    assert.equal(rcodeOf(await q(`old.${z}`, 'A')), 'NXDOMAIN')
    assert.deepEqual(dataOf(await q(z, 'NS'), 'NS').sort(), ['ns1.elsewhere.example', 'ns2.elsewhere.example'])
    assert.equal(serialOf(await q(z, 'SOA')), zones.serial(id))
  })

  it('deletes the zone on removal or when no longer served, whatever the kind; an unknown one is fine', async () => {
    const z = 'removed.nl'
    const id = zones.add(z, { records: [{ type: 'A', name: z, value: '192.0.2.1' }] })
    await driver.publish({ domain: z, kind: 'zone' })
    assert.equal(rcodeOf(await q(z, 'A')), 'NOERROR')
    zones.remove(id)
    await driver.publish({ domain: z, kind: 'removed' })
    assert.equal((await pdns.api('GET', `/zones/${z}.`)).status, 404)
    assert.equal(rcodeOf(await q(z, 'A')), 'REFUSED')
    await driver.publish({ domain: z, kind: 'removed' })

    const gone = 'gone.nl'
    const goneId = zones.add(gone)
    await driver.publish({ domain: gone, kind: 'zone' })
    zones.remove(goneId)
    await driver.publish({ domain: gone, kind: 'records', names: [`www.${gone}`] })
    assert.equal((await pdns.api('GET', `/zones/${gone}.`)).status, 404)
    await driver.publish({ domain: 'never-served.example', kind: 'zone' })
  })

  it('pushes of one zone run in turn: the last change made is the one PowerDNS ends with', async () => {
    const z = 'in-turn.nl'
    const id = zones.add(z)
    const pushes: Promise<void>[] = []
    for (let i = 1; i <= 8; i++) {
      zones.setRecords(id, [{ type: 'A', name: `www.${z}`, value: `192.0.2.${i}` }])
      pushes.push(driver.publish({ domain: z, kind: i % 2 ? 'zone' : 'records', names: [`www.${z}`] }))
    }
    await Promise.all(pushes)
    assert.deepEqual(await contentOf(z, `www.${z}.`, 'A'), ['192.0.2.8'])
    assert.equal(serialOf(await q(z, 'SOA')), zones.serial(id))
  })

  // Pushes of one zone from two instances: each instance's own pushes run in turn, but nothing orders them across
  // instances. Every kind of push (a records change, a zone change, a resync) is tried as the slow one.
  for (const kind of ['records', 'zone', 'resync'] as const)
    it(`a ${kind} push that read the zone before another instance pushed a newer one leaves PowerDNS with the newer`, async () => {
      const z = `stale-${kind}.nl`
      const name = `_acme-challenge.${z}`
      const txt = (...values: string[]) => values.map((value) => ({ type: 'TXT', name, value }))
      const id = zones.add(z, { records: txt('a') })
      await driver.publish({ domain: z, kind: 'zone' })
      zones.setRecords(id, txt('a', 'x'))
      // Instance 1 reads the zone's records, then is slow to write what it read.
      let release = () => {}
      let reported = () => {}
      const held = new Promise<void>((r) => (release = r))
      const read = new Promise<void>((r) => (reported = r))
      let holding = true
      const slow: ZoneSource = {
        servedZones: (names) => zones.servedZones(names),
        servedZone: (zoneId) => zones.servedZone(zoneId),
        servedZoneNames: () => zones.servedZoneNames(),
        catalog: () => zones.catalog(),
        zoneRecords: async (zoneId) => {
          const records = await zones.zoneRecords(zoneId)
          if (zoneId === id && holding) {
            holding = false
            reported()
            await held
          }
          return records
        },
      }
      const first = new PowerDnsDriver({ url: pdns.url, apiKey: pdns.apiKey, timeoutMs: 2000 }, slow, silent)
      await first.start()
      const push =
        kind === 'resync'
          ? first.resync([z])
          : first.publish({ domain: z, kind, ...(kind === 'records' ? { names: [name] } : {}) })
      await read
      // Instance 2: a newer change, pushed at once, while instance 1 still holds the older read.
      zones.setRecords(id, txt('a', 'b'))
      await driver.publish({ domain: z, kind: 'records', names: [name] })
      release()
      await push
      assert.deepEqual(await contentOf(z, `${name}.`, 'TXT'), ['"a"', '"b"'])
      assert.equal(serialOf(await q(z, 'SOA')), zones.serial(id))
      await first.stop()
    })

  it('serves a zone whose name PowerDNS writes otherwise in its zone id (an underscore)', async () => {
    const z = 'under_score.nl'
    const id = zones.add(z, { records: [{ type: 'A', name: z, value: '192.0.2.1' }] })
    await driver.publish({ domain: z, kind: 'zone' })
    zones.addRecord(id, { type: 'A', name: `www.${z}`, value: '192.0.2.2' })
    await driver.publish({ domain: z, kind: 'records', names: [`www.${z}`] })
    assert.deepEqual(dataOf(await q(`www.${z}`, 'A'), 'A'), ['192.0.2.2'])
    assert.deepEqual(await driver.resync([z]), [])
    zones.remove(id)
    await driver.publish({ domain: z, kind: 'removed' })
    assert.equal(rcodeOf(await q(z, 'A')), 'REFUSED')
  })

  it('throws DnsPushError on the refused connection while PowerDNS is down (no API key in it); pushes once it is back', async () => {
    const z = 'outage.nl'
    const id = zones.add(z)
    await driver.publish({ domain: z, kind: 'zone' })
    await pdns.stop()
    try {
      zones.addRecord(id, { type: 'A', name: `www.${z}`, value: '192.0.2.7' })
      // Failed by the refused connection itself, not by the request timeout.
      await assert.rejects(driver.publish({ domain: z, kind: 'records', names: [`www.${z}`] }), (err: unknown) => {
        assert.ok(err instanceof DnsPushError)
        assert.match(
          err.message,
          /^PowerDNS GET \/zones\/outage\.nl\.: PowerDNS at http:\/\/127\.0\.0\.1:\d+ cannot be reached \(ECONNREFUSED\)$/,
        )
        assert.ok(!err.message.includes(pdns.apiKey))
        return true
      })
      await assert.rejects(driver.resync(), DnsPushError)
    } finally {
      await pdns.start()
    }
    await driver.publish({ domain: z, kind: 'records', names: [`www.${z}`] })
    assert.deepEqual(dataOf(await q(`www.${z}`, 'A'), 'A'), ['192.0.2.7'])
  })

  it('throws DnsPushError on a refusal (a wrong key, a zone name refused) and on no answer', async () => {
    const wrongKey = new PowerDnsDriver({ url: pdns.url, apiKey: 'not-the-key' }, zones, silent)
    zones.add('wrong-key.nl')
    await assert.rejects(
      wrongKey.publish({ domain: 'wrong-key.nl', kind: 'zone' }),
      (err: unknown) => err instanceof DnsPushError && err.status === 401 && !err.message.includes('not-the-key'),
    )

    const tooLong = `${'x'.repeat(64)}.nl`
    zones.add(tooLong)
    await assert.rejects(
      driver.publish({ domain: tooLong, kind: 'zone' }),
      (err: unknown) =>
        err instanceof DnsPushError &&
        err.status === 422 &&
        /^PowerDNS GET \/zones\/x{64}\.nl\.: 422 Unable to parse DNS Name/.test(err.message),
    )

    const sockets = new Set<net.Socket>()
    const mute = net.createServer((s) => sockets.add(s))
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r))
    try {
      const port = (mute.address() as net.AddressInfo).port
      const slow = new PowerDnsDriver({ url: `http://127.0.0.1:${port}`, apiKey: 'k', timeoutMs: 200 }, zones, silent)
      const timedOut = /cannot be reached \(no answer within 200 ms\)/
      await assert.rejects(slow.publish({ domain: 'wrong-key.nl', kind: 'zone' }), timedOut)
    } finally {
      for (const s of sockets) s.destroy()
      await new Promise((r) => mute.close(r))
    }
  })

  it('resync reports and fixes drift: RRsets, a missing zone, extra zones (deleted if hostapi made them)', async () => {
    const z = 'drift.nl'
    zones.add(z, {
      records: [
        { type: 'A', name: `www.${z}`, value: '192.0.2.1' },
        { type: 'TXT', name: z, value: 'ok' },
      ],
    })
    await driver.publish({ domain: z, kind: 'zone' })
    const missing = 'missing.nl'
    zones.add(missing, { records: [{ type: 'A', name: missing, value: '192.0.2.5' }] })

    await pdns.api('PATCH', `/zones/${z}.`, {
      rrsets: [
        replace(`www.${z}.`, 'A', '203.0.113.66', 3600),
        { name: `${z}.`, type: 'TXT', changetype: 'DELETE' },
        replace(`extra.${z}.`, 'AAAA', '2001:db8::66'),
      ],
    })
    const soa = (zone: string) =>
      replace(`${zone}.`, 'SOA', `ns1.example.com. hostmaster.${zone}. 1 10800 3600 1209600 300`)
    for (const [name, account] of [
      ['stale.nl', 'hostapi'],
      ['operator.nl', 'operator'],
    ] as const) {
      const zone = { name: `${name}.`, kind: 'Native', account, nameservers: [], rrsets: [soa(name)] }
      const made = await pdns.api('POST', '/zones', zone)
      assert.equal(made.status, 201)
    }
    assert.deepEqual(dataOf(await q(`www.${z}`, 'A'), 'A'), ['203.0.113.66'])

    const drift = await driver.resync([z, missing, 'stale.nl', 'operator.nl', 'unknown.nl'])
    assert.deepEqual(drift, [
      { zone: z, missing: false, extra: false, differing: [`www.${z}. A`, `${z}. TXT`, `extra.${z}. AAAA`] },
      { zone: missing, missing: true, extra: false, differing: [] },
      { zone: 'stale.nl', missing: false, extra: true, differing: [] },
      { zone: 'operator.nl', missing: false, extra: true, differing: [] },
    ])
    assert.deepEqual(dataOf(await q(`www.${z}`, 'A'), 'A'), ['192.0.2.1'])
    assert.deepEqual(txtOf(await q(z, 'TXT')), ['ok'])
    assert.equal(rcodeOf(await q(`extra.${z}`, 'AAAA')), 'NXDOMAIN')
    assert.deepEqual(dataOf(await q(missing, 'A'), 'A'), ['192.0.2.5'])
    assert.equal((await pdns.api('GET', '/zones/stale.nl.')).status, 404)
    assert.equal((await pdns.api('GET', '/zones/operator.nl.')).status, 200)

    // Without names every PowerDNS zone is compared (the foreign RRset left in records.nl above is fixed too); the
    // operator's zone, kept, is reported every time.
    // Zones hostapi serves and PowerDNS lacks are found too; one PowerDNS refuses (the 64-character label of the
    // refusal test) is reported with its error while the others are fixed.
    const operator = { zone: 'operator.nl', missing: false, extra: true, differing: [] }
    const refused = (d: ZoneDrift) => d.error !== undefined
    const first = await driver.resync()
    assert.deepEqual(
      first.filter(refused).map((d) => [d.zone, /422/.test(d.error!)]),
      [[`${'x'.repeat(64)}.nl`, true]],
    )
    assert.ok(first.some((d) => d.zone === 'operator.nl'))
    assert.deepEqual(
      (await driver.resync()).filter((d) => !refused(d)),
      [operator],
    )
  })
})
