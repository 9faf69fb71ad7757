import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { createPrivateKey, generateKeyPairSync, createPublicKey, verify } from 'node:crypto'
import {
  PUBLIC_KEY_FORMS,
  canonicalRdata,
  compareNames,
  coveringNsec,
  decodeBase64,
  delegationKey,
  dnskeyRdata,
  generateZoneKey,
  iscPrivateKey,
  keyTag,
  nameWire,
  p256Point,
  rrsigLabels,
  rrsigSigningInput,
  signP256,
} from './dnssec.js'

const b64 = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'base64')
const epoch = (t: string) =>
  Date.UTC(+t.slice(0, 4), +t.slice(4, 6) - 1, +t.slice(6, 8), +t.slice(8, 10), +t.slice(10, 12), +t.slice(12)) / 1000

// RFC 6605 §6.1: the P-256 example zone key, its DS and a signed A record.
const P256_KEY = b64('GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==')
const P256_SIG = b64('qx6wLYqmh+l9oCKTN6qIc+bw6ya+KJ8oMz0YP107epXAyGmt+3SNruPFKG7tZoLBLlUzGGus7ZwmwWep666VCw==')
const publicKeyOf = (point: Buffer) =>
  createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(0, 32).toString('base64url'),
      y: point.subarray(32).toString('base64url'),
    },
    format: 'jwk',
  })

describe('DNSSEC wire forms', () => {
  test('key tag and DS digest of the RFC 6605 example key (55648, SHA-256)', () => {
    const key = delegationKey('example.net', { flags: 257, algorithm: 13, publicKey: P256_KEY })
    assert.equal(key.keyTag, 55648)
    assert.equal(key.digest.toString('hex'), 'b4c8c1fe2e7477127b27115656ad6256f424625bf5c1e2770ce6d6e37df61d17')
  })

  test('RSA keys in RFC 3110 form are checked against the sizes of their algorithm', () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
    const jwk = publicKey.export({ format: 'jwk' })
    const e = Buffer.from(jwk.e!, 'base64url')
    const rfc3110 = Buffer.concat([Buffer.from([e.length]), e, Buffer.from(jwk.n!, 'base64url')])
    assert.ok(PUBLIC_KEY_FORMS[8]!.valid(rfc3110))
    assert.ok(PUBLIC_KEY_FORMS[10]!.valid(rfc3110))
    assert.ok(!PUBLIC_KEY_FORMS[10]!.valid(Buffer.concat([rfc3110.subarray(0, 4 + e.length), Buffer.alloc(60, 0xff)])))
    assert.ok(!PUBLIC_KEY_FORMS[8]!.valid(Buffer.from([3, 1, 0])), 'no modulus')
    const tag = keyTag(dnskeyRdata({ flags: 257, algorithm: 8, publicKey: rfc3110 }))
    assert.ok(tag >= 0 && tag <= 0xffff)
  })

  test('the RRSIG signing input verifies the RFC 6605 example signature', () => {
    const fields = {
      typeCovered: 'A',
      algorithm: 13,
      labels: rrsigLabels('www.example.net'),
      originalTTL: 3600,
      expiration: epoch('20100909100439'),
      inception: epoch('20100812100439'),
      keyTag: 55648,
      signersName: 'example.net',
    }
    assert.equal(fields.labels, 3)
    const input = rrsigSigningInput(fields, 'WWW.Example.NET', [canonicalRdata('A', '192.0.2.1')])
    const ok = verify('sha256', input, { key: publicKeyOf(P256_KEY), dsaEncoding: 'ieee-p1363' }, P256_SIG)
    assert.ok(ok, 'the example signature verifies over our signing input')
  })

  test('RDATA names are lower-cased in the canonical form, text is not', () => {
    assert.deepEqual(canonicalRdata('CNAME', 'WWW.Example.NL'), nameWire('www.example.nl'))
    const mx = canonicalRdata('MX', { preference: 10, exchange: 'Mail.Example.NL' })
    assert.deepEqual(mx.subarray(2), nameWire('mail.example.nl'))
    assert.ok(canonicalRdata('TXT', [Buffer.from('Hello')]).includes(Buffer.from('Hello')))
  })

  test('an RRset is signed in canonical order, duplicates once', () => {
    const fields = {
      typeCovered: 'A',
      algorithm: 13,
      labels: 2,
      originalTTL: 300,
      expiration: 2,
      inception: 1,
      keyTag: 1,
      signersName: 'example.nl',
    }
    const a = canonicalRdata('A', '192.0.2.2')
    const b = canonicalRdata('A', '192.0.2.1')
    const one = rrsigSigningInput(fields, 'example.nl', [a, b, a])
    assert.deepEqual(one, rrsigSigningInput(fields, 'example.nl', [b, a]))
  })

  test('wildcard owners do not count the * label', () => {
    assert.equal(rrsigLabels('*.wild.example.nl'), 3)
    assert.equal(rrsigLabels('example.nl'), 2)
  })

  test('canonical name order (RFC 4034 §6.1 example)', () => {
    const ordered = ['example', 'a.example', 'yljkjljk.a.example', 'Z.a.example', 'zABC.a.EXAMPLE', 'z.example']
    ordered.push('\u0001.z.example', '*.z.example', '\u00c8.z.example')
    const shuffled = [...ordered].reverse().sort(compareNames)
    assert.deepEqual(shuffled, ordered)
  })

  test('a covering NSEC covers the name and its descendants, and nothing an LDH name can be', () => {
    const nsec = coveringNsec('mail2', 'example.nl')!
    assert.deepEqual(nsec, { owner: 'mail1~.example.nl', next: 'mail2\u0000.example.nl' })
    for (const inside of ['mail2.example.nl', 'a.b.mail2.example.nl']) {
      assert.ok(compareNames(nsec.owner, inside) < 0 && compareNames(inside, nsec.next) < 0, inside)
    }
    for (const outside of ['mail1.example.nl', 'x.mail1.example.nl', 'mail2-b.example.nl', 'mail3.example.nl']) {
      const covered = compareNames(nsec.owner, outside) < 0 && compareNames(outside, nsec.next) < 0
      assert.ok(!covered, outside)
    }
    assert.deepEqual(coveringNsec('*', 'example.nl'), { owner: ')~.example.nl', next: '*\u0000.example.nl' })
    const long = 'a'.repeat(63)
    assert.deepEqual(coveringNsec(long, 'nl'), { owner: `${'a'.repeat(62)}\`.nl`, next: `${'a'.repeat(62)}b.nl` })
    assert.equal(coveringNsec('a\u0001', 'nl'), null)
  })

  test('a generated key signs what its DNSKEY verifies; the ISC form holds the same key', () => {
    const { privateKeyPem, publicKey } = generateZoneKey()
    assert.equal(publicKey.length, 64)
    const key = createPrivateKey(privateKeyPem)
    assert.deepEqual(p256Point(key), publicKey)
    const sig = signP256(key, Buffer.from('data'))
    assert.equal(sig.length, 64)
    assert.ok(verify('sha256', Buffer.from('data'), { key: publicKeyOf(publicKey), dsaEncoding: 'ieee-p1363' }, sig))
    const d = /PrivateKey: (\S+)/.exec(iscPrivateKey(key))![1]!
    assert.equal(Buffer.from(d, 'base64').toString('base64url'), key.export({ format: 'jwk' }).d)
  })

  test('public keys are checked for their algorithm', () => {
    assert.ok(PUBLIC_KEY_FORMS[13]!.valid(P256_KEY))
    assert.ok(!PUBLIC_KEY_FORMS[13]!.valid(Buffer.alloc(64, 1)), 'not a point on the curve')
    assert.ok(!PUBLIC_KEY_FORMS[13]!.valid(P256_KEY.subarray(1)))
    assert.ok(!PUBLIC_KEY_FORMS[8]!.valid(P256_KEY), 'not RFC 3110 RSA')
    assert.ok(!PUBLIC_KEY_FORMS[15]!.valid(P256_KEY))
    assert.equal(decodeBase64('not base64!'), null)
    assert.equal(decodeBase64('abc'), null)
    assert.deepEqual(decodeBase64('AAEC AwQ='), Buffer.from([0, 1, 2, 3, 4]))
  })
})

test('customer keys: any text and any bytes are judged valid or not, never thrown on', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ unit: 'binary', maxLength: 700 }), fc.base64String({ maxLength: 700 })),
      fc.constantFrom(...Object.keys(PUBLIC_KEY_FORMS).map(Number)),
      (text, alg) => {
        const key = decodeBase64(text)
        if (key === null) return
        assert.equal(typeof PUBLIC_KEY_FORMS[alg]!.valid(key), 'boolean')
      },
    ),
    { seed: 20261124, numRuns: 1000 },
  )
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), fc.constantFrom(5, 8, 10, 13, 14, 15, 16), (bytes, alg) => {
      const valid = PUBLIC_KEY_FORMS[alg]!.valid(Buffer.from(bytes))
      // A key the check accepts has its algorithm's length: a fixed one for the curves, a whole RSA key otherwise.
      const sizes: Record<number, number> = { 13: 64, 14: 96, 15: 32, 16: 57 }
      if (valid) assert.ok(sizes[alg] ? bytes.length === sizes[alg] : bytes.length >= 2 + 64)
    }),
    { seed: 20261124, numRuns: 1000 },
  )
})
