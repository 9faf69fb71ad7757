// Property-based tests of the zone-file parser and of record normalisation: any text ends quickly in records
// or an ApiError, never another error or a hang; generated valid zones survive an export and an import.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ApiError } from '../../errors.js'
import { RECORD_TYPES, checkRecordSet, normaliseRecord, type NormalisedRecord } from './records.js'
import { parseZone, renderZone } from './zone-file.js'

const ZONE = 'example.nl'
const seed = 20261123
const runs = (n: number) => ({ seed, numRuns: n })

/** Runs `f`: its result, or 'ApiError'; any other throw fails the property. */
function outcome<T>(f: () => T): T | 'ApiError' {
  try {
    return f()
  } catch (err) {
    if (err instanceof ApiError) return 'ApiError'
    throw err
  }
}

/** Any UTF-16 unit (lone surrogates included), with the characters that matter to a zone file more often. */
const unit = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ' ',
      '\t',
      '\n',
      '\r',
      ';',
      '(',
      ')',
      '"',
      '\\',
      '$',
      '@',
      '.',
      '*',
      '0',
      '9',
      'a',
      'Z',
      '-',
      '_',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '\u0000',
      '\u000b',
      '\u000c',
      '\u0085',
      '\u00a0',
      '\u1680',
      '\u2028',
      '\u2029',
      '\u3000',
      '\ufeff',
      '\u200b',
      '\u200d',
      '\u202e',
      '\ud800',
      '\udfff',
      '\u00fc',
      '\u{1F4A9}',
    ),
  },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 3 }) },
)
const anyText = fc.string({ unit, maxLength: 300 })

const token = fc.oneof(
  fc.constantFrom(
    '$ORIGIN',
    '$TTL',
    '$INCLUDE',
    '$GENERATE',
    '@',
    '(',
    ')',
    ';',
    '"',
    '\\',
    '\\0',
    '\\999',
    'IN',
    'CH',
    'ANY',
    '3600',
    '1h30m',
    '2D',
    '0',
    '99999999999999999999',
  ),
  fc.constantFrom(...RECORD_TYPES, 'SOA', 'PTR', 'TYPE65', 'a', 'txt'),
  fc.constantFrom(
    'www',
    'example.nl.',
    'x.example.net.',
    '.',
    '*',
    '*.a',
    '_acme-challenge',
    'a..b',
    'xn--',
    'bücher',
    '192.0.2.1',
    '2001:db8::1',
    '::',
    '10',
    '"v=spf1 -all"',
    '"a\\"b"',
    '"\\065"',
  ),
  anyText.map((s) => s.slice(0, 20)),
)
const tokens = fc
  .array(fc.tuple(token, fc.constantFrom(' ', '\t', '\n', '', ' (\n', ')\n', ' ; c\n')), { maxLength: 60 })
  .map((ts) => ts.map(([t, sep]) => t + sep).join(''))

describe('zone-file parser properties', () => {
  it('any text: records or an ApiError', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const r = outcome(() => parseZone(ZONE, text))
        assert.ok(r === 'ApiError' || Array.isArray(r))
      }),
      runs(3000),
    )
  })

  it('random tokens of the zone-file language: records or an ApiError', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(tokens, fc.boolean(), (text, withOrigin) => {
        const r = outcome(() =>
          parseZone(ZONE, (withOrigin ? '$ORIGIN example.nl.\n' : '') + text, { maxRecords: 100 }),
        )
        assert.ok(r === 'ApiError' || Array.isArray(r))
      }),
      runs(3000),
    )
  })

  it('huge inputs end in records or an ApiError', { timeout: 120_000 }, () => {
    const huge = [
      '('.repeat(200_000),
      ')'.repeat(200_000),
      '"'.repeat(200_001),
      `"${'a'.repeat(1_000_000)}`,
      '\\'.repeat(1_000_001),
      'a'.repeat(2_000_000),
      '\u00a0'.repeat(1_000_000),
      '\u0000'.repeat(1_000_000),
      '\n'.repeat(1_000_000),
      ';'.repeat(1_000_000),
      ' '.repeat(1_000_000),
      `x IN TXT ${'"a" '.repeat(200_000)}`,
      `x IN TXT (${' "ab"\n'.repeat(100_000)})`,
      `x ${'1h'.repeat(100_000)} IN A 192.0.2.1`,
      '\\0'.repeat(500_000),
      `${'a.'.repeat(500_000)} IN A 192.0.2.1`,
      `x IN A ${'1.'.repeat(500_000)}1`,
      `x IN AAAA ${':'.repeat(1_000_000)}`,
      `x IN CAA 0 issue "${'\\'.repeat(1_000_000)}"`,
      `x IN MX ${'9'.repeat(1_000_000)} y`,
      'www IN A 192.0.2.1\n'.repeat(50_000),
    ]
    for (const text of huge) {
      const r = outcome(() => parseZone(ZONE, text, { maxRecords: 10_000 }))
      assert.ok(r === 'ApiError' || Array.isArray(r), text.slice(0, 30))
    }
  })
})

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/)
const owner = fc.oneof(
  fc.constant('@'),
  label,
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}`),
  label.map((l) => `*.${l}`),
  label.map((l) => `_${l}`),
)
const host = fc.oneof(
  label.map((l) => `${l}.${ZONE}.`),
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}.com.`),
)
const u16 = fc.integer({ min: 0, max: 65535 })
const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'))
const txtText = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', '\\', ';', ' ', '(', ')', 'a', '\u00fc', '\u{1F4A9}', '\t'),
    fc.string({ unit: 'grapheme', maxLength: 1 }),
  ),
  maxLength: 600,
})
const values: Record<(typeof RECORD_TYPES)[number], fc.Arbitrary<string>> = {
  A: fc.ipV4(),
  AAAA: fc.ipV6(),
  CNAME: host,
  NS: host,
  MX: fc.tuple(u16, host).map(([p, h]) => `${p} ${h}`),
  TXT: txtText,
  SRV: fc.tuple(u16, u16, u16, host).map(([p, w, port, h]) => `${p} ${w} ${port} ${h}`),
  CAA: fc
    .tuple(
      fc.constantFrom(0, 128),
      fc.constantFrom('issue', 'issuewild', 'iodef'),
      fc.stringMatching(/^[a-z0-9.;= -]{0,40}$/),
    )
    .map(([f, t, v]) => `${f} ${t} "${v}"`),
  TLSA: fc
    .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 1 }), hex(32))
    .map(([u, s, h]) => `${u} ${s} 1 ${h}`),
  SSHFP: fc.tuple(fc.constantFrom(1, 2, 3, 4, 6), hex(32)).map(([a, h]) => `${a} 2 ${h}`),
  DS: fc.tuple(u16, fc.constantFrom(8, 13, 15), hex(32)).map(([k, a, h]) => `${k} ${a} 2 ${h}`),
}
const record = fc
  .constantFrom(...RECORD_TYPES)
  .chain((type) =>
    fc.record({ type: fc.constant(type), name: owner, value: values[type], ttl: fc.integer({ min: 60, max: 86400 }) }),
  )

describe('record normalisation properties', () => {
  it('every type with any name, value and TTL: a record or an ApiError', { timeout: 120_000 }, () => {
    const input = fc.record({
      type: fc.oneof(fc.constantFrom(...RECORD_TYPES), fc.constantFrom('a', ' mx ', 'SOA', ''), anyText),
      name: fc.oneof(fc.constant(null), owner, anyText),
      value: fc.oneof(
        anyText,
        fc.constantFrom(...RECORD_TYPES).chain((t) => values[t]),
      ),
      ttl: fc.oneof(fc.constant(null), fc.integer(), fc.double()),
    })
    fc.assert(
      fc.property(input, fc.boolean(), (r, zoneFile) => {
        const n = outcome(() => normaliseRecord(ZONE, r, { zoneFile }))
        if (n === 'ApiError') return
        assert.ok((RECORD_TYPES as readonly string[]).includes(n.type))
        assert.ok(n.name === ZONE || n.name.endsWith(`.${ZONE}`), n.name)
        // The stored form is a fixed point.
        assert.deepEqual(normaliseRecord(ZONE, n), n)
      }),
      runs(4000),
    )
  })

  it('a generated valid zone of every type survives export and import unchanged', { timeout: 120_000 }, () => {
    const key = (r: NormalisedRecord) => `${r.type} ${r.name} ${r.ttl} ${r.value}`
    fc.assert(
      fc.property(fc.array(record, { maxLength: 25 }), (inputs) => {
        const normalised: NormalisedRecord[] = []
        for (const r of inputs) {
          const n = outcome(() => normaliseRecord(ZONE, r))
          if (n !== 'ApiError') normalised.push(n)
        }
        const unique = [...new Map(normalised.map((r) => [`${r.type} ${r.name} ${r.value}`, r])).values()]
        const set = outcome(() => checkRecordSet(ZONE, unique))
        fc.pre(set !== 'ApiError')
        const text = renderZone(
          ZONE,
          { serial: 1, nameservers: [{ hostname: 'ns1.hostapi.test' }] },
          set as NormalisedRecord[],
        )
        const back = parseZone(ZONE, text)
        assert.deepEqual(back.map(key).sort(), (set as NormalisedRecord[]).map(key).sort(), text)
      }),
      runs(1500),
    )
  })
})

describe('error texts', () => {
  it('quote at most 1,000 characters of the input', () => {
    for (const text of [
      `x IN A ${'1.'.repeat(500_000)}1`,
      `${'a'.repeat(100_000)} IN A 192.0.2.1`,
      `x IN ${'Q'.repeat(100_000)} 1`,
    ]) {
      assert.throws(
        () => parseZone(ZONE, text),
        (err: ApiError) =>
          err instanceof ApiError &&
          err.message.length <= 1000 &&
          err.message.startsWith('Invalid zone file: line 1: '),
      )
    }
    assert.throws(
      () => normaliseRecord(ZONE, { type: 'A', name: 'x', value: '9'.repeat(100_000) }),
      (err: ApiError) => err.message.length <= 1000,
    )
  })
})
