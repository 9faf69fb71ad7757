import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ApiError } from '../../errors.js'
import { RECORD_TYPES, normaliseRecord } from '../../lib/dns/records.js'
import type { ServedZone, ZoneRecord } from './dns.js'
import { powerDnsContent, toPowerDnsRRsets, type PowerDnsRRset } from './powerdns-rrsets.js'

const zone = (over: Partial<ServedZone> = {}): ServedZone => ({
  id: 1,
  name: 'example.nl',
  serial: 2026112401,
  nameserversJson: JSON.stringify([{ hostname: 'ns1.hostapi.test' }, { hostname: 'NS2.hostapi.test.' }]),
  ...over,
})
const rec = (type: string, name: string, value: string, ttl = 3600): ZoneRecord => ({ type, name, value, ttl })
const find = (sets: PowerDnsRRset[], name: string, type: string) => sets.find((s) => s.name === name && s.type === type)
const contents = (s: PowerDnsRRset | undefined) => s?.records.map((r) => r.content)

describe('toPowerDnsRRsets', () => {
  it('starts with the SOA (hostapi serial, first nameserver, hostmaster) and the apex NS from the zone', () => {
    const sets = toPowerDnsRRsets(zone(), [])
    assert.deepEqual(sets, [
      {
        name: 'example.nl.',
        type: 'SOA',
        ttl: 3600,
        records: [
          { content: 'ns1.hostapi.test. hostmaster.example.nl. 2026112401 10800 3600 1209600 300', disabled: false },
        ],
      },
      {
        name: 'example.nl.',
        type: 'NS',
        ttl: 3600,
        records: [
          { content: 'ns1.hostapi.test.', disabled: false },
          { content: 'ns2.hostapi.test.', disabled: false },
        ],
      },
    ])
  })

  it('writes hostnames fully qualified with the dot, TXT quoted and split, other values as stored', () => {
    const sets = toPowerDnsRRsets(zone(), [
      rec('A', 'example.nl', '192.0.2.1'),
      rec('AAAA', 'www.example.nl', '2001:db8::1'),
      rec('CNAME', 'shop.example.nl', 'shops.example.com.'),
      rec('MX', 'example.nl', '10 mail.example.nl.'),
      rec('MX', 'nomail.example.nl', '0 .'),
      rec('NS', 'sub.example.nl', 'ns.other.example.'),
      rec('SRV', '_sip._tcp.example.nl', '10 5 5060 sip.example.nl.'),
      rec('TXT', 'example.nl', 'v=spf1 "quoted" \\ -all'),
      rec('TXT', 'long.example.nl', 'a'.repeat(300)),
      rec('TXT', 'tab.example.nl', 'a\tb é'),
      rec('CAA', 'example.nl', '0 issue "letsencrypt.org"'),
      rec('TLSA', '_443._tcp.example.nl', `3 1 1 ${'ab'.repeat(32)}`),
      rec('SSHFP', 'host.example.nl', `4 2 ${'cd'.repeat(32)}`),
      rec('DS', 'sub.example.nl', `12345 8 2 ${'ef'.repeat(32)}`),
      rec('A', '*.example.nl', '192.0.2.9'),
    ])
    assert.deepEqual(contents(find(sets, 'example.nl.', 'A')), ['192.0.2.1'])
    assert.deepEqual(contents(find(sets, 'www.example.nl.', 'AAAA')), ['2001:db8::1'])
    assert.deepEqual(contents(find(sets, 'shop.example.nl.', 'CNAME')), ['shops.example.com.'])
    assert.deepEqual(contents(find(sets, 'example.nl.', 'MX')), ['10 mail.example.nl.'])
    assert.deepEqual(contents(find(sets, 'nomail.example.nl.', 'MX')), ['0 .'])
    assert.deepEqual(contents(find(sets, 'sub.example.nl.', 'NS')), ['ns.other.example.'])
    assert.deepEqual(contents(find(sets, '_sip._tcp.example.nl.', 'SRV')), ['10 5 5060 sip.example.nl.'])
    assert.deepEqual(contents(find(sets, 'example.nl.', 'TXT')), ['"v=spf1 \\"quoted\\" \\\\ -all"'])
    assert.deepEqual(contents(find(sets, 'long.example.nl.', 'TXT')), [`"${'a'.repeat(255)}" "${'a'.repeat(45)}"`])
    assert.deepEqual(contents(find(sets, 'tab.example.nl.', 'TXT')), ['"a\\009b é"'])
    assert.deepEqual(contents(find(sets, 'example.nl.', 'CAA')), ['0 issue "letsencrypt.org"'])
    assert.deepEqual(contents(find(sets, '_443._tcp.example.nl.', 'TLSA')), [`3 1 1 ${'ab'.repeat(32)}`])
    assert.deepEqual(contents(find(sets, 'host.example.nl.', 'SSHFP')), [`4 2 ${'cd'.repeat(32)}`])
    assert.deepEqual(contents(find(sets, 'sub.example.nl.', 'DS')), [`12345 8 2 ${'ef'.repeat(32)}`])
    assert.deepEqual(contents(find(sets, '*.example.nl.', 'A')), ['192.0.2.9'])
  })

  it('groups a name and type into one RRset with the lowest TTL, dropping exact duplicates', () => {
    const sets = toPowerDnsRRsets(zone(), [
      rec('A', 'www.example.nl', '192.0.2.1', 3600),
      rec('A', 'WWW.example.nl.', '192.0.2.2', 300),
      rec('A', 'www.example.nl', '192.0.2.1', 60),
    ])
    const www = find(sets, 'www.example.nl.', 'A')!
    assert.deepEqual(contents(www), ['192.0.2.1', '192.0.2.2'])
    assert.equal(www.ttl, 60)
  })

  it('skips what PowerDNS would refuse or hostapi does not serve, naming the reason', () => {
    const skipped: string[] = []
    const sets = toPowerDnsRRsets(
      zone(),
      [
        rec('A', 'www.other.nl', '192.0.2.1'),
        rec('NS', 'example.nl', 'ns9.example.com.'),
        rec('A', 'bad.example.nl', '999.1.1.1'),
        rec('PTR', 'p.example.nl', 'x.example.nl.'),
        rec('A', 'sp ace.example.nl', '192.0.2.1'),
        rec('CNAME', 'mixed.example.nl', 'a.example.com.'),
        rec('TXT', 'mixed.example.nl', 'x'),
        rec('CNAME', 'two.example.nl', 'a.example.com.'),
        rec('CNAME', 'two.example.nl', 'b.example.com.'),
        rec('A', 'ttl.example.nl', '192.0.2.1', Number.NaN),
        rec('CNAME', 'example.nl', 'a.example.com.'),
        rec('DS', 'example.nl.', `1 8 2 ${'ab'.repeat(32)}`),
      ],
      (r, reason) => skipped.push(`${r.type} ${r.name}: ${reason}`),
    )
    assert.deepEqual(skipped, [
      'A www.other.nl: outside the zone',
      'NS example.nl: the apex SOA and NS come from the domain',
      'A bad.example.nl: not a valid A value',
      'PTR p.example.nl: not a valid PTR value',
      'A sp ace.example.nl: not a valid owner name',
      'A ttl.example.nl: not a valid TTL',
      'CNAME example.nl: no CNAME at the zone apex',
      'DS example.nl.: no DS at the zone apex',
      'CNAME mixed.example.nl: a CNAME beside other data at its name',
      'CNAME two.example.nl: a second CNAME at its name',
    ])
    assert.deepEqual(
      sets.map((s) => `${s.name} ${s.type}`),
      ['example.nl. SOA', 'example.nl. NS', 'mixed.example.nl. TXT', 'two.example.nl. CNAME'],
    )
  })

  it('adds the glue of in-zone nameservers unless records say otherwise', () => {
    const nameserversJson = JSON.stringify([
      { hostname: 'ns1.example.nl', ipv4: '192.0.2.53', ipv6: '2001:DB8::53' },
      { hostname: 'ns2.example.nl', ipv4: '192.0.2.54' },
      { hostname: 'ns.elsewhere.example', ipv4: '192.0.2.99' },
    ])
    const sets = toPowerDnsRRsets(zone({ nameserversJson }), [rec('A', 'ns2.example.nl', '192.0.2.2')])
    assert.deepEqual(contents(find(sets, 'ns1.example.nl.', 'A')), ['192.0.2.53'])
    assert.deepEqual(contents(find(sets, 'ns1.example.nl.', 'AAAA')), ['2001:db8::53'])
    assert.deepEqual(contents(find(sets, 'ns2.example.nl.', 'A')), ['192.0.2.2'])
    assert.equal(find(sets, 'ns.elsewhere.example.', 'A'), undefined)
  })

  it('tolerates bad nameserver data: no apex NS, a SOA naming ns1 of the zone', () => {
    const sets = toPowerDnsRRsets(zone({ nameserversJson: 'not json' }), [])
    assert.deepEqual(
      sets.map((s) => s.type),
      ['SOA'],
    )
    assert.match(sets[0]!.records[0]!.content, /^ns1\.example\.nl\. hostmaster\.example\.nl\. /)
  })
})

describe('toPowerDnsRRsets (properties)', () => {
  const runs = { seed: 20261124, numRuns: 400 }
  const anyString = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }))
  const anyRecord = fc.record({
    type: fc.oneof(fc.constantFrom(...RECORD_TYPES, 'SOA', 'PTR', ''), anyString),
    name: fc.oneof(
      fc.constantFrom('example.nl', 'www.example.nl', '*.example.nl', 'other.nl'),
      anyString,
      anyString.map((s) => `${s}.example.nl`),
    ),
    value: fc.oneof(fc.constantFrom('192.0.2.1', '::1', '10 .', '"q"', '0 issue ""', 'a.b.'), anyString),
    ttl: fc.oneof(fc.integer(), fc.double(), fc.constant(3600)),
  })

  it('never throws on any record, and what it returns is inside the zone with content', () => {
    fc.assert(
      fc.property(fc.array(anyRecord, { maxLength: 20 }), anyString, (records, nsJson) => {
        for (const z of [zone(), zone({ nameserversJson: nsJson })]) {
          for (const s of toPowerDnsRRsets(z, records)) {
            assert.ok(s.name === 'example.nl.' || s.name.endsWith('.example.nl.'))
            assert.ok(s.records.length > 0 && s.records.every((r) => r.content !== ''))
          }
        }
      }),
      runs,
    )
  })

  it('pushes every record the API stores (normaliseRecord), apex NS aside', () => {
    const hexDigit = fc.constantFrom(...'0123456789abcdefABCDEF')
    const hex = (n: number) => fc.string({ unit: hexDigit, minLength: n, maxLength: n })
    const valueFor: Record<string, fc.Arbitrary<string>> = {
      A: fc.ipV4(),
      AAAA: fc.ipV6(),
      CNAME: fc.domain(),
      NS: fc.domain(),
      MX: fc.tuple(fc.nat(65535), fc.oneof(fc.domain(), fc.constant('.'))).map(([p, h]) => `${p} ${h}`),
      SRV: fc.tuple(fc.nat(65535), fc.nat(65535), fc.nat(65535), fc.domain()).map((f) => f.join(' ')),
      TXT: fc.string({ minLength: 1, maxLength: 600 }),
      CAA: fc.string({ maxLength: 40 }).map((v) => `0 issue "${v}"`),
      TLSA: hex(32).map((h) => `3 1 0 ${h}`),
      SSHFP: hex(64).map((h) => `4 2 ${h}`),
      DS: hex(64).map((h) => `1 8 2 ${h}`),
    }
    const input = fc.constantFrom(...RECORD_TYPES).chain((type) =>
      fc.record({
        type: fc.constant(type),
        name: fc.constantFrom('@', 'www', '*', '_x._tcp', 'a.b'),
        value: valueFor[type]!,
      }),
    )
    fc.assert(
      fc.property(input, (i) => {
        let stored: ReturnType<typeof normaliseRecord>
        try {
          stored = normaliseRecord('example.nl', i)
        } catch (err) {
          if (err instanceof ApiError) return
          throw err
        }
        assert.ok(powerDnsContent(stored.type, stored.value) !== null, `${stored.type} ${stored.value}`)
        const skipped: string[] = []
        toPowerDnsRRsets(zone(), [stored], (_r, reason) => skipped.push(reason))
        assert.deepEqual(skipped, [])
      }),
      runs,
    )
  })
})
