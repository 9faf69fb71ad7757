import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ApiError } from '../../errors.js'
import { normaliseRecord, type NormalisedRecord } from './records.js'
import { parseTtl, parseZone, renderZone, soaFor } from './zone-file.js'

const Z = 'example.com'
const meta = { serial: 2026112201, nameservers: [{ hostname: 'ns1.hostapi.net' }, { hostname: 'ns2.hostapi.net.' }] }
const rec = (type: string, name: string, value: string, ttl?: number) => normaliseRecord(Z, { type, name, value, ttl })

const bad = (text: string, re: RegExp) =>
  assert.throws(
    () => parseZone(Z, text),
    (e: unknown) => e instanceof ApiError && e.status === 400 && re.test(e.message),
    `expected ${re}`,
  )

const realWorld = `; example.com zone, as exported by another provider
$ORIGIN example.com.
$TTL 1h
@   IN  SOA ns1.other-dns.net. admin.example.com. (
        2024010101 ; serial
        7200       ; refresh
        3600       ; retry
        1209600    ; expire
        300 )      ; negative cache TTL

@       IN  NS      ns1.other-dns.net.   ; apex NS: ignored on import
@       IN  NS      ns2.other-dns.net.
        IN  A       192.0.2.10
        IN  AAAA    2001:DB8:0:0::10
        IN  MX      10 mail
        IN  MX      20 mail.backup.example.net.
@ 300   IN  TXT     "v=spf1 include:_spf.example.net ~all"
@       IN  CAA     0 issue "letsencrypt.org"
www     600 IN CNAME @
mail    IN  A       192.0.2.20
_dmarc  IN  TXT     ( "v=DMARC1; p=quarantine; "
                      "rua=mailto:dmarc@example.com" )
_sip._tcp IN SRV    10 60 5060 sip
*.dev   IN  A       192.0.2.30
sub     IN  NS      ns1.sub-dns.example.net.
sub     IN  DS      12345 13 2 ( ABABABABABABABABABABABABABABABAB
                                 ABABABABABABABABABABABABABABABAB )
$ORIGIN lab.example.com.
host    IN  SSHFP   4 2 ${'cd'.repeat(32)}
_443._tcp.host IN TLSA 3 1 1 ${'ef'.repeat(32)}
`

test('parses a real-world zone: $ORIGIN, $TTL units, multi-line SOA, comments, blank owners, parentheses', () => {
  const records = parseZone(Z, realWorld)
  const rows = records.map((r) => `${r.name} ${r.ttl} ${r.type} ${r.value}`)
  assert.deepEqual(rows, [
    'example.com 3600 A 192.0.2.10',
    'example.com 3600 AAAA 2001:db8::10',
    'example.com 3600 MX 10 mail.example.com.',
    'example.com 3600 MX 20 mail.backup.example.net.',
    'example.com 300 TXT v=spf1 include:_spf.example.net ~all',
    'example.com 3600 CAA 0 issue "letsencrypt.org"',
    'www.example.com 600 CNAME example.com.',
    'mail.example.com 3600 A 192.0.2.20',
    '_dmarc.example.com 3600 TXT v=DMARC1; p=quarantine; rua=mailto:dmarc@example.com',
    '_sip._tcp.example.com 3600 SRV 10 60 5060 sip.example.com.',
    '*.dev.example.com 3600 A 192.0.2.30',
    'sub.example.com 3600 NS ns1.sub-dns.example.net.',
    `sub.example.com 3600 DS 12345 13 2 ${'ab'.repeat(32)}`,
    `host.lab.example.com 3600 SSHFP 4 2 ${'cd'.repeat(32)}`,
    `_443._tcp.host.lab.example.com 3600 TLSA 3 1 1 ${'ef'.repeat(32)}`,
  ])
})

test('a BIND dump: $ORIGIN . with absolute owners, then $ORIGIN of the zone', () => {
  const dump = [
    '$ORIGIN .',
    '$TTL 3600\t; 1 hour',
    'example.com\t\tIN SOA\tns1.example.com. hostmaster.example.com. (',
    '\t\t\t\t2024010101 ; serial',
    '\t\t\t\t3600       ; refresh (1 hour)',
    '\t\t\t\t900 604800 300 )',
    '\t\t\tNS\tns1.example.com.',
    '\t\t\tA\t192.0.2.1',
    '$ORIGIN example.com.',
    'ns1\t\t\tA\t192.0.2.53',
    'www\t\t\tCNAME\t@',
  ].join('\n')
  assert.deepEqual(
    parseZone(Z, dump).map((r) => `${r.name} ${r.type} ${r.value}`),
    ['example.com A 192.0.2.1', 'ns1.example.com A 192.0.2.53', 'www.example.com CNAME example.com.'],
  )
  assert.throws(() => parseZone(Z, '$ORIGIN .\n@ IN A 192.0.2.1\n'), /line 2: .*outside the zone/)
})

test('TTL fallbacks: explicit, $TTL, else the previous TTL, else 3600', () => {
  const r = parseZone(Z, 'a IN A 192.0.2.1\nb 120 IN A 192.0.2.2\nc IN A 192.0.2.3\n$TTL 900\nd A 192.0.2.4\n')
  assert.deepEqual(
    r.map((x) => x.ttl),
    [3600, 120, 120, 900],
  )
  assert.equal(parseTtl('1h30m'), 5400)
  assert.equal(parseTtl('2D'), 172800)
  assert.equal(parseTtl('1w'), 604800)
  assert.equal(parseTtl('abc'), null)
})

test('class and TTL in either order; quoted TXT with ; and escapes inside', () => {
  const r = parseZone(Z, 'x IN 300 TXT "a;b" "c\\"d" \\; ; comment\ny 300 IN TXT "caf\\195\\169"\n')
  assert.deepEqual(
    r.map((x) => [x.name, x.ttl, x.value]),
    [
      ['x.example.com', 300, 'a;bc"d;'],
      ['y.example.com', 300, 'café'],
    ],
  )
})

test('bad lines answer 400 with the line number', () => {
  bad(
    'www IN A 192.0.2.1\nbad IN A 999.1.1.1\n',
    /^Invalid zone file: line 2: A bad\.example\.com\.: value "999\.1\.1\.1" is not an IPv4 address$/,
  )
  bad('\n\nwww IN PTR host.\n', /^Invalid zone file: line 3: record type PTR is not supported/)
  bad('www IN BOGUS 1\n', /^Invalid zone file: line 1: "BOGUS" is not a record type$/)
  bad('www IN\n', /^Invalid zone file: line 1: missing record type$/)
  bad('  IN A 192.0.2.1\n', /^Invalid zone file: line 1: the first record has no owner name$/)
  bad('a IN TXT "open\n', /^Invalid zone file: line 1: unterminated quoted string$/)
  bad('a IN A 192.0.2.1\nb IN MX ( 10\n mail\n', /^Invalid zone file: line 2: unbalanced "\("/)
  bad('a IN A 192.0.2.1 )\n', /^Invalid zone file: line 1: unbalanced "\)"$/)
  bad('$INCLUDE other.zone\n', /^Invalid zone file: line 1: the \$INCLUDE directive is not supported$/)
  bad('www.other.net. IN A 192.0.2.1\n', /^Invalid zone file: line 1: .*outside the zone example\.com$/)
  bad('$ORIGIN other.net.\nwww IN A 192.0.2.1\n', /^Invalid zone file: line 2: .*outside the zone/)
  bad('a CH A 192.0.2.1\n', /line 1: class CH is not supported/)
  bad('a 30 IN A 192.0.2.1\n', /line 1: .*ttl must be an integer from 60 to 86400/)
  bad(
    'www IN CNAME x.example.net.\nwww IN A 192.0.2.1\n',
    /^Invalid zone file: line 2: A www\.example\.com: a CNAME must be the only record at its name \(see line 1\)$/,
  )
  bad('@ IN CNAME x.example.net.\n', /line 1: .*not allowed at the zone apex/)
})

test('SOA and apex NS are ignored; NS below the apex is kept; exact duplicates dropped', () => {
  const r = parseZone(Z, '@ IN SOA a. b. 1 2 3 4 5\n@ IN NS ns.x.\nsub IN NS ns.x.\nsub IN NS ns.x.\n')
  assert.deepEqual(r, [{ type: 'NS', name: 'sub.example.com', value: 'ns.x.', ttl: 3600 }])
})

test('renders BIND text with $ORIGIN, $TTL, SOA with the serial, apex NS, sorted records', () => {
  const records: NormalisedRecord[] = [
    rec('TXT', '_acme-challenge', 'token'),
    rec('A', 'www', '192.0.2.2'),
    rec('MX', '@', '10 mail'),
    rec('A', '@', '192.0.2.1', 300),
    rec('A', 'mail', '192.0.2.3'),
  ]
  const text = renderZone(Z, meta, records)
  const lines = text.split('\n')
  assert.equal(lines[0], '$ORIGIN example.com.')
  assert.equal(lines[1], '$TTL 3600')
  assert.match(lines[2]!, /^@\s+3600\s+IN\s+SOA\s+ns1\.hostapi\.net\. hostmaster\.example\.com\. \($/)
  assert.match(text, /2026112201 ; serial/)
  const body = lines.filter((l) => / IN {2}(?!SOA)/.test(l)).map((l) => l.split(/\s+/).join(' '))
  assert.deepEqual(body, [
    '@ 3600 IN NS ns1.hostapi.net.',
    '@ 3600 IN NS ns2.hostapi.net.',
    '@ 300 IN A 192.0.2.1',
    '@ 3600 IN MX 10 mail.example.com.',
    '_acme-challenge 3600 IN TXT "token"',
    'mail 3600 IN A 192.0.2.3',
    'www 3600 IN A 192.0.2.2',
  ])
  assert.equal(soaFor(Z, meta).serial, 2026112201)
})

test('round trip: export → import → export is identical (long TXT split into 255-byte strings)', () => {
  const long = `v=DKIM1; k=rsa; p=${'A'.repeat(600)} "quoted" \\ back é`
  const records: NormalisedRecord[] = [
    rec('A', '@', '192.0.2.1'),
    rec('AAAA', '*.dev', '2001:db8::1', 60),
    rec('CNAME', 'www', '@'),
    rec('MX', '', '0 .'),
    rec('TXT', 'dkim._domainkey', long),
    rec('TXT', '_acme-challenge', 'one'),
    rec('TXT', '_acme-challenge', 'two'),
    rec('SRV', '_xmpp._tcp', '5 0 5269 xmpp.example.net'),
    rec('CAA', '@', '0 iodef "mailto:sec@example.com"'),
    rec('NS', 'sub', 'ns1.example.net'),
    rec('DS', 'sub', `1 8 2 ${'ab'.repeat(32)}`),
    rec('TLSA', '_443._tcp.www', `3 1 1 ${'cd'.repeat(32)}`),
    rec('SSHFP', 'host', `1 1 ${'ef'.repeat(20)}`),
  ]
  const first = renderZone(Z, meta, records)
  assert.match(first, /"[^"]{255}" "/)
  const imported = parseZone(Z, first)
  assert.equal(imported.find((r) => r.name === 'dkim._domainkey.example.com')!.value, long)
  assert.equal(imported.length, records.length)
  assert.equal(renderZone(Z, meta, imported), first)
  assert.equal(renderZone(Z, meta, parseZone(Z, renderZone(Z, meta, imported))), first)
})

test('an empty zone renders SOA and NS and parses to no records', () => {
  const text = renderZone(Z, { serial: 1, nameservers: [] }, [])
  assert.match(text, /SOA\s+ns1\.example\.com\. hostmaster\.example\.com\./)
  assert.deepEqual(parseZone(Z, text), [])
  assert.deepEqual(parseZone(Z, ''), [])
})
