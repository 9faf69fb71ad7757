import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { webcrypto } from 'node:crypto'
import fc from 'fast-check'
import { ApiError } from '../../errors.js'
import { loadX509 } from '../../drivers/ca/x509.js'
import { generateCsr, parseCsr, type CsrInput, type GeneratedCsr } from './csr.js'

const opensslCsr = (subj: string, san?: string) =>
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      '/dev/null',
      '-subj',
      subj,
      ...(san ? ['-addext', `subjectAltName=${san}`] : []),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  )

const rejects = async (csr: string, text: string) => {
  await assert.rejects(
    parseCsr(csr),
    (err: unknown) => err instanceof ApiError && err.status === 400 && err.message === text,
  )
}

describe('CSR generation and reading', () => {
  it('generates a 4096-bit RSA request that reads back with its name', async () => {
    const g = await generateCsr({
      common_name: 'WWW.Example.com',
      organization: 'Ex',
      email: 'a@example.com',
      country: 'nl',
      state: 'NH',
      locality: 'Adam',
      bits: 4096,
    })
    const parsed = await parseCsr(g.csr)
    assert.equal(parsed.key, 'RSA 4096')
    assert.deepEqual(parsed.names, ['www.example.com'])
    const text = execFileSync('openssl', ['req', '-noout', '-text'], { input: g.csr, encoding: 'utf8' })
    assert.match(text, /Public-Key: \(4096 bit\)/)
    assert.match(text, /C ?= ?NL/)
  })

  it('reads the common name first, then the other SANs once each, in lower case', async () => {
    const parsed = await parseCsr(
      opensslCsr('/CN=Example.com', 'DNS:www.example.com,DNS:EXAMPLE.com,DNS:*.example.com'),
    )
    assert.deepEqual(parsed.names, ['example.com', 'www.example.com', '*.example.com'])
    assert.equal(parsed.commonName, 'example.com')
    assert.equal(parsed.key, 'EC P-256')
  })

  it('accepts the NEW CERTIFICATE REQUEST label and CRLF line ends', async () => {
    const csr = opensslCsr('/CN=www.example.com')
      .replace(/CERTIFICATE REQUEST/g, 'NEW CERTIFICATE REQUEST')
      .replace(/\n/g, '\r\n')
    assert.deepEqual((await parseCsr(csr)).names, ['www.example.com'])
  })

  it('refuses IP addresses, names that are not domains and a request without any name', async () => {
    await rejects(
      opensslCsr('/CN=www.example.com', 'IP:192.0.2.1'),
      'Invalid CSR: only DNS names can be certified, not ip 192.0.2.1',
    )
    await rejects(
      opensslCsr('/CN=www.example.com', 'DNS:under_score.example.com'),
      'Invalid CSR: "under_score.example.com" is not a domain name',
    )
    await rejects(opensslCsr('/O=Example'), 'Invalid CSR: it names no domain (set the common name or a subjectAltName)')
    await rejects(opensslCsr('/CN=com'), 'Invalid CSR: the common name "com" is not a domain name')
    await rejects(
      opensslCsr('/CN=*.*.example.com'),
      'Invalid CSR: the common name "*.*.example.com" is not a domain name',
    )
  })
})

/** DER: a tag, a length (short or long form) and the content. */
const tlv = (tag: number, body: Buffer) => {
  const n = body.length
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff])
  return Buffer.concat([Buffer.from([tag]), len, body])
}

/** A correctly signed PKCS#10 request whose subject is `subject` (DER of a Name) as it is, however odd. */
async function signedCsrWithSubject(subject: Buffer): Promise<string> {
  const alg = {
    name: 'RSASSA-PKCS1-v1_5',
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: 'SHA-256',
  }
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair
  const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey))
  const info = tlv(0x30, Buffer.concat([Buffer.from([0x02, 0x01, 0x00]), subject, spki, Buffer.from([0xa0, 0x00])]))
  const signature = Buffer.from(await webcrypto.subtle.sign(alg, keys.privateKey, info))
  const sha256WithRsa = Buffer.from('300d06092a864886f70d01010b0500', 'hex')
  const der = tlv(0x30, Buffer.concat([info, sha256WithRsa, tlv(0x03, Buffer.concat([Buffer.from([0]), signature]))]))
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE REQUEST-----\n`
}

/** A Name of one attribute: `oid` (DER content) with a string of ASN.1 type `tag` holding `value` as it is. */
const nameOf = (tag: number, value: Buffer, oid = Buffer.from([0x55, 0x04, 0x03])) =>
  tlv(0x30, tlv(0x31, tlv(0x30, Buffer.concat([tlv(0x06, oid), tlv(tag, value)]))))

const base: CsrInput = {
  common_name: 'www.example.com',
  organization: 'Example',
  email: 'a@example.com',
  country: 'NL',
  state: 'NH',
  locality: 'Amsterdam',
  key_type: 'ec',
}

/** True when `f` throws (or rejects with) an ApiError and nothing else. */
const apiErrorOnly = (err: unknown) => {
  if (err instanceof ApiError) return true
  throw err
}

describe('CSR subject fields and unreadable requests (properties)', () => {
  it('answers `Invalid CSR` for a signed request whose subject strings do not decode', async () => {
    for (const [tag, value] of [
      [0x1e, [0x00, 0x41, 0x00]],
      [0x1c, [0x00, 0x00, 0x00]],
      [0x0c, [0xff, 0xfe]],
      [0x1e, [0xd8, 0x00]],
    ] as const) {
      const csr = await signedCsrWithSubject(nameOf(tag, Buffer.from(value)))
      await assert.rejects(
        parseCsr(csr),
        (err: unknown) => err instanceof ApiError && err.status === 400 && err.message.startsWith('Invalid CSR: '),
      )
    }
  })

  it('takes any Unicode text in the subject fields, or answers a 400 naming the field', async () => {
    const fields = ['organization', 'unit', 'state', 'locality'] as const
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...fields),
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 80 }),
          fc.string({
            unit: fc.constantFrom(
              '\ud800',
              '\udc00',
              '\0',
              'a',
              ' ',
              '\u202e',
              'é',
              'e\u0301',
              '😀',
              '=',
              ',',
              '+',
              '"',
              '\\',
              '#',
              '<',
              ';',
            ),
            maxLength: 70,
          }),
          fc.string({ unit: 'grapheme', minLength: 60, maxLength: 140 }),
        ),
        async (field, value) => {
          let g: GeneratedCsr
          try {
            g = await generateCsr({ ...base, [field]: value })
          } catch (err) {
            assert.ok(apiErrorOnly(err))
            assert.equal((err as ApiError).status, 400)
            assert.ok((err as ApiError).message.startsWith(`Invalid ${field}: `), (err as ApiError).message)
            return
          }
          // Accepted: it reads back as the same text, trimmed and in NFC.
          const x509 = await loadX509()
          const short = { organization: 'O', unit: 'OU', state: 'ST', locality: 'L' }[field]
          const read = new x509.Pkcs10CertificateRequest(g.csr).subjectName.getField(short)
          const expected = value.normalize('NFC').trim()
          assert.deepEqual(read, expected === '' ? [] : [expected])
        },
      ),
      { seed: 20261123, numRuns: 100 },
    )
  })

  it('answers any text given as a CSR with a reading or a 400', async () => {
    const pemOf = (bytes: Uint8Array) =>
      `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from(bytes).toString('base64')}\n-----END CERTIFICATE REQUEST-----`
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.uint8Array({ maxLength: 400 }).map(pemOf)),
        async (text) => {
          await parseCsr(text).then(() => undefined, apiErrorOnly)
        },
      ),
      { seed: 20261123, numRuns: 300 },
    )
  })
})
