import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ApiError } from '../../errors.js'
import { checkRecordSet, fqdnWithDot, normaliseRecord, type RecordInput } from './records.js'

const Z = 'example.com'
const norm = (r: RecordInput, zone = Z) => normaliseRecord(zone, r)
const fails = (r: RecordInput, text: RegExp, zone = Z) =>
  assert.throws(
    () => normaliseRecord(zone, r),
    (e: unknown) => e instanceof ApiError && e.status === 400 && text.test(e.message),
    `expected ${text} for ${JSON.stringify(r)}`,
  )

test('names: apex, relative, FQDN with and without dot, wildcard, case', () => {
  const name = (n: string | null | undefined) => norm({ type: 'A', name: n, value: '192.0.2.1' }).name
  assert.equal(name('@'), 'example.com')
  assert.equal(name(''), 'example.com')
  assert.equal(name(null), 'example.com')
  assert.equal(name(undefined), 'example.com')
  assert.equal(name('www'), 'www.example.com')
  assert.equal(name('_acme-challenge'), '_acme-challenge.example.com')
  assert.equal(name('*.dev'), '*.dev.example.com')
  assert.equal(name('*'), '*.example.com')
  assert.equal(name('WWW.Example.COM'), 'www.example.com')
  assert.equal(name('www.example.com.'), 'www.example.com')
  assert.equal(name('example.com.'), 'example.com')
  assert.equal(name('example.com'), 'example.com')
  assert.equal(name('a.b.example.com'), 'a.b.example.com')
  assert.equal(name('a.b'), 'a.b.example.com')
})

test('names outside the zone or malformed are refused with the record named', () => {
  fails(
    { type: 'A', name: 'www.other.com.', value: '192.0.2.1' },
    /^Invalid DNS record A www\.other\.com\.: name is outside the zone example\.com$/,
  )
  fails({ type: 'A', name: 'www.other.com', value: '192.0.2.1' }, /outside the zone/)
  fails({ type: 'A', name: 'notexample.com.', value: '192.0.2.1' }, /outside the zone/)
  fails({ type: 'A', name: 'a..b', value: '192.0.2.1' }, /empty label/)
  fails({ type: 'A', name: 'a*b', value: '192.0.2.1' }, /wildcard/)
  fails({ type: 'A', name: 'www.*', value: '192.0.2.1' }, /wildcard/)
  fails({ type: 'A', name: 'bad name', value: '192.0.2.1' }, /invalid label/)
  fails({ type: 'A', name: 'x'.repeat(64), value: '192.0.2.1' }, /longer than 63/)
  fails({ type: 'A', name: '-www', value: '192.0.2.1' }, /invalid label/)
})

test('types are case-insensitive; unknown types and missing values are refused', () => {
  assert.equal(norm({ type: 'aaaa', name: 'www', value: '2001:db8::1' }).type, 'AAAA')
  fails({ type: 'SPF', name: 'www', value: 'x' }, /^Invalid DNS record SPF www: unsupported type/)
  fails({ type: '', name: 'www', value: 'x' }, /type is required/)
  fails({ type: 'A', name: 'www', value: undefined as unknown as string }, /value is required/)
})

test('ttl: default 3600, range 60..86400, integers only', () => {
  assert.equal(norm({ type: 'A', name: '', value: '192.0.2.1' }).ttl, 3600)
  assert.equal(norm({ type: 'A', name: '', value: '192.0.2.1', ttl: 60 }).ttl, 60)
  assert.equal(norm({ type: 'A', name: '', value: '192.0.2.1', ttl: 86400 }).ttl, 86400)
  for (const ttl of [59, 86401, 120.5, -1, '300' as unknown as number]) {
    fails({ type: 'A', name: '', value: '192.0.2.1', ttl }, /ttl must be an integer from 60 to 86400/)
  }
})

test('A and AAAA', () => {
  assert.equal(norm({ type: 'A', name: '', value: ' 192.0.2.1 ' }).value, '192.0.2.1')
  for (const v of ['256.1.1.1', '1.2.3', '01.2.3.4', 'x', '2001:db8::1', ''])
    fails({ type: 'A', name: '', value: v }, /not an IPv4 address/)
  assert.equal(norm({ type: 'AAAA', name: '', value: '2001:0DB8:0000:0000:0000:0000:0000:0001' }).value, '2001:db8::1')
  for (const v of ['1::2::3', '192.0.2.1', 'fe80::1%eth0', 'g::1'])
    fails({ type: 'AAAA', name: '', value: v }, /not an IPv6 address/)
})

test('CNAME: hostnames made absolute, never at the apex', () => {
  assert.equal(norm({ type: 'CNAME', name: 'www', value: 'example.com' }).value, 'example.com.')
  assert.equal(norm({ type: 'CNAME', name: 'www', value: '@' }).value, 'example.com.')
  assert.equal(norm({ type: 'CNAME', name: 'www', value: 'web' }).value, 'web.example.com.')
  assert.equal(norm({ type: 'CNAME', name: 'www', value: 'ghs.GoogleHosted.com' }).value, 'ghs.googlehosted.com.')
  assert.equal(norm({ type: 'CNAME', name: 'www', value: 'target.example.net.' }).value, 'target.example.net.')
  fails(
    { type: 'CNAME', name: '@', value: 'other.net.' },
    /^Invalid DNS record CNAME @: a CNAME record is not allowed at the zone apex$/,
  )
  fails({ type: 'CNAME', name: 'www', value: 'a b' }, /one hostname/)
  fails({ type: 'CNAME', name: 'www', value: 'bad!host.' }, /invalid label/)
})

test('zone-file semantics: every hostname without a dot is relative', () => {
  const r = normaliseRecord(Z, { type: 'CNAME', name: 'www', value: 'ghs.googlehosted.com' }, { zoneFile: true })
  assert.equal(r.value, 'ghs.googlehosted.com.example.com.')
  const n = normaliseRecord(Z, { type: 'A', name: 'www.other.com', value: '192.0.2.1' }, { zoneFile: true })
  assert.equal(n.name, 'www.other.com.example.com')
})

test('MX, NS, SRV', () => {
  assert.equal(norm({ type: 'MX', name: '', value: '10  mail' }).value, '10 mail.example.com.')
  assert.equal(norm({ type: 'MX', name: '', value: '0 .' }).value, '0 .')
  fails({ type: 'MX', name: '', value: 'mail.example.com' }, /"<priority> <host>"/)
  fails({ type: 'MX', name: '', value: '70000 mail.example.com' }, /priority must be an integer/)
  assert.equal(norm({ type: 'NS', name: 'sub', value: 'ns1.example.net' }).value, 'ns1.example.net.')
  fails({ type: 'NS', name: '@', value: 'ns1.example.net' }, /apex/)
  assert.equal(norm({ type: 'SRV', name: '_sip._tcp', value: '10 60 5060 sip' }).value, '10 60 5060 sip.example.com.')
  fails({ type: 'SRV', name: '_sip._tcp', value: '10 60 sip.example.com' }, /<priority> <weight> <port> <target>/)
  fails({ type: 'SRV', name: '_sip._tcp', value: '10 60 65536 sip.example.com' }, /port must be/)
})

test('TXT: quoted or unquoted, stored unquoted, up to 4000 characters', () => {
  assert.equal(norm({ type: 'TXT', name: '_acme-challenge', value: 'x' }).value, 'x')
  assert.equal(norm({ type: 'TXT', name: '', value: '"v=spf1 -all"' }).value, 'v=spf1 -all')
  assert.equal(norm({ type: 'TXT', name: '', value: '"abc" "def"' }).value, 'abcdef')
  assert.equal(norm({ type: 'TXT', name: '', value: '"say \\"hi\\"; ok"' }).value, 'say "hi"; ok')
  assert.equal(norm({ type: 'TXT', name: '', value: 'v=DKIM1; k=rsa; p=abc' }).value, 'v=DKIM1; k=rsa; p=abc')
  assert.equal(norm({ type: 'TXT', name: '', value: 'a'.repeat(4000) }).value.length, 4000)
  fails({ type: 'TXT', name: '', value: 'a'.repeat(4001) }, /longer than 4000/)
  fails({ type: 'TXT', name: '', value: '' }, /value is required/)
  fails({ type: 'TXT', name: '', value: 'a\nb' }, /control characters/)
})

test('CAA, TLSA, SSHFP, DS', () => {
  assert.equal(norm({ type: 'CAA', name: '', value: '0 issue "letsencrypt.org"' }).value, '0 issue "letsencrypt.org"')
  assert.equal(
    norm({ type: 'CAA', name: '', value: '128 ISSUEWILD letsencrypt.org' }).value,
    '128 issuewild "letsencrypt.org"',
  )
  assert.equal(
    norm({ type: 'CAA', name: '', value: '0 iodef "mailto:sec@example.com"' }).value,
    '0 iodef "mailto:sec@example.com"',
  )
  fails({ type: 'CAA', name: '', value: '256 issue "x"' }, /flags/)
  fails({ type: 'CAA', name: '', value: 'issue "x"' }, /<flags> <tag>/)

  const sha256 = 'AB'.repeat(32)
  assert.equal(
    norm({ type: 'TLSA', name: '_443._tcp.www', value: `3 1 1 ${sha256}` }).value,
    `3 1 1 ${'ab'.repeat(32)}`,
  )
  fails({ type: 'TLSA', name: '_443._tcp', value: '3 1 1 abcd' }, /64 hexadecimal/)
  fails({ type: 'TLSA', name: '_443._tcp', value: `4 1 1 ${sha256}` }, /usage/)
  fails({ type: 'TLSA', name: '_443._tcp', value: '3 1 0 xyz0' }, /hexadecimal/)

  assert.equal(norm({ type: 'SSHFP', name: 'host', value: `4 2 ${sha256}` }).value, `4 2 ${'ab'.repeat(32)}`)
  fails({ type: 'SSHFP', name: 'host', value: `5 2 ${sha256}` }, /algorithm/)
  fails({ type: 'SSHFP', name: 'host', value: '4 1 abcd' }, /40 hexadecimal/)

  assert.equal(
    norm({ type: 'DS', name: 'sub', value: `12345 13 2 ${sha256.slice(0, 32)} ${sha256.slice(32)}` }).value,
    `12345 13 2 ${'ab'.repeat(32)}`,
  )
  fails({ type: 'DS', name: '@', value: `12345 13 2 ${sha256}` }, /apex/)
  fails({ type: 'DS', name: 'sub', value: `12345 13 3 ${sha256}` }, /digest type/)
})

test('IDN names become punycode', () => {
  assert.equal(
    normaliseRecord('bücher.example', { type: 'A', name: 'www', value: '192.0.2.1' }).name,
    'www.xn--bcher-kva.example',
  )
})

test('normalising a stored record again changes nothing', () => {
  const inputs: RecordInput[] = [
    { type: 'mx', name: '', value: '10 mail' },
    { type: 'CNAME', name: 'www', value: 'ghs.googlehosted.com' },
    { type: 'TXT', name: '_dmarc', value: '"v=DMARC1; p=none"' },
    { type: 'CAA', name: '@', value: '0 issue letsencrypt.org' },
    { type: 'AAAA', name: '*.dev', value: '2001:DB8::0:1' },
    { type: 'SRV', name: '_xmpp._tcp', value: '5 0 5269 xmpp' },
  ]
  for (const i of inputs) {
    const once = norm(i)
    assert.deepEqual(norm(once), once)
    assert.deepEqual(normaliseRecord(Z, { ...once, name: fqdnWithDot(once.name) }, { zoneFile: true }), once)
  }
})

test('checkRecordSet: CNAME alone at its name; same type and name allowed; duplicates dropped', () => {
  const a = norm({ type: 'TXT', name: '_acme-challenge', value: 'one' })
  const b = norm({ type: 'TXT', name: '_acme-challenge', value: 'two' })
  assert.deepEqual(checkRecordSet(Z, [a, b, a]), [a, b])
  const cname = norm({ type: 'CNAME', name: 'www', value: 'web' })
  const aw = norm({ type: 'A', name: 'www', value: '192.0.2.1' })
  assert.throws(
    () => checkRecordSet(Z, [cname, aw]),
    /^Error: Invalid DNS record CNAME www\.example\.com: a CNAME must be the only record at its name \(also has A\)$|CNAME must be the only record/,
  )
  const cname2 = norm({ type: 'CNAME', name: 'www', value: 'other' })
  assert.throws(() => checkRecordSet(Z, [cname, cname2]), /only one CNAME/)
  assert.deepEqual(checkRecordSet(Z, [cname, cname]), [cname])
})

test('fqdnWithDot', () => {
  assert.equal(fqdnWithDot('www.example.com'), 'www.example.com.')
  assert.equal(fqdnWithDot('www.example.com.'), 'www.example.com.')
})
