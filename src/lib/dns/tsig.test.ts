import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import dnsPacket from 'dns-packet'
import { findTsig, parseTsigKey, signTsig, tsigLength, verifyTsig, type TsigKey } from './tsig.js'

// A query for example.nl SOA (with EDNS and a cookie) signed by `dig -y hmac-sha256:transfer.key:<secret>` (BIND 9),
// captured on the wire.
const KEY: TsigKey = { name: 'transfer.key', secret: Buffer.from('secret-secret-secret-secret-32b') }
const DIG_QUERY = Buffer.from(
  '11ee01200001000000000002076578616d706c65026e6c000006000100002904d000000000000c000a00089b7e49cf560fd46f087472' +
    '616e73666572036b65790000fa00ff00000000003d0b686d61632d7368613235360000006b060737012c00203064cce41f5fdb53bc' +
    '5616c37f06cfde7a4316e095b417c9f0caf7ec62706eb911ee00000000',
  'hex',
)
const DIG_TIME = 0x6b060737

const query = (id = 7) =>
  dnsPacket.encode({ id, type: 'query', flags: 0, questions: [{ name: 'example.nl', type: 'AXFR', class: 'IN' }] })
const response = (id = 7, n = 1) =>
  dnsPacket.encode({
    id,
    type: 'response',
    flags: dnsPacket.AUTHORITATIVE_ANSWER,
    questions: [{ name: 'example.nl', type: 'AXFR', class: 'IN' }],
    answers: Array.from({ length: n }, (_, i) => ({
      name: `h${i}.example.nl`,
      type: 'A' as const,
      ttl: 60,
      data: '192.0.2.1',
    })),
  })

describe('TSIG (RFC 8945, hmac-sha256)', () => {
  it('verifies a query signed by dig', () => {
    const r = verifyTsig(DIG_QUERY, KEY, { now: DIG_TIME + 10 })
    assert.equal(r.status, 'ok')
    assert.equal(r.status === 'ok' && r.record.keyName, 'transfer.key')
    assert.equal(
      r.status === 'ok' && r.mac.toString('hex'),
      '3064cce41f5fdb53bc5616c37f06cfde7a4316e095b417c9f0caf7ec62706eb9',
    )
  })

  it('reports a changed byte as BADSIG, another key as BADKEY, a time outside the fudge as BADTIME', () => {
    const changed = Buffer.from(DIG_QUERY)
    changed[14]! ^= 1
    assert.deepEqual(pick(verifyTsig(changed, KEY, { now: DIG_TIME })), ['error', 'BADSIG'])
    const wrongSecret = { ...KEY, secret: Buffer.from('another-secret') }
    assert.deepEqual(pick(verifyTsig(DIG_QUERY, wrongSecret, { now: DIG_TIME })), ['error', 'BADSIG'])
    assert.deepEqual(pick(verifyTsig(DIG_QUERY, { ...KEY, name: 'other.key' }, { now: DIG_TIME })), ['error', 'BADKEY'])
    assert.deepEqual(pick(verifyTsig(DIG_QUERY, null, { now: DIG_TIME })), ['error', 'BADKEY'])
    assert.deepEqual(pick(verifyTsig(DIG_QUERY, KEY, { now: DIG_TIME + 301 })), ['error', 'BADTIME'])
    assert.deepEqual(pick(verifyTsig(DIG_QUERY, KEY, { now: DIG_TIME - 301 })), ['error', 'BADTIME'])
    assert.deepEqual(pick(verifyTsig(query(), KEY, { now: DIG_TIME })), ['unsigned', undefined])
  })

  it('signs a query that verifies, with the TSIG record last and ARCOUNT raised', () => {
    const { message, mac } = signTsig(query(), KEY, { now: 1_800_000_000 })
    assert.equal(message.length, query().length + tsigLength(KEY))
    assert.equal(message.readUInt16BE(10), 1)
    const decoded = dnsPacket.decode(message)
    assert.equal(decoded.additionals?.[0]?.type, 'TSIG')
    const r = verifyTsig(message, KEY, { now: 1_800_000_100 })
    assert.equal(r.status, 'ok')
    assert.deepEqual(r.status === 'ok' && r.mac, mac)
  })

  it('chains the messages of a transfer: the first over the request MAC, the next over the prior MAC', () => {
    const req = signTsig(query(), KEY, { now: 1_800_000_000 })
    const first = signTsig(response(), KEY, { now: 1_800_000_001, requestMac: req.mac })
    const second = signTsig(response(7, 3), KEY, { now: 1_800_000_002, priorMac: first.mac })
    const now = 1_800_000_003
    assert.equal(verifyTsig(first.message, KEY, { now, requestMac: req.mac }).status, 'ok')
    assert.equal(verifyTsig(second.message, KEY, { now, priorMac: first.mac }).status, 'ok')
    assert.equal(verifyTsig(second.message, KEY, { now, priorMac: req.mac }).status, 'error')
    assert.equal(verifyTsig(first.message, KEY, { now }).status, 'error')
  })

  it('signs with the original id, so a message whose id was changed still verifies', () => {
    const { message } = signTsig(query(1234), KEY, { now: 1_800_000_000 })
    message.writeUInt16BE(4321, 0)
    assert.equal(verifyTsig(message, KEY, { now: 1_800_000_000 }).status, 'ok')
  })

  it('adds an unsigned record (empty MAC) for BADKEY and BADSIG answers', () => {
    const { message, mac } = signTsig(response(), KEY, { now: 1, unsigned: true, error: 16 })
    assert.equal(mac.length, 0)
    const found = findTsig(message)
    assert.ok(found && found !== 'malformed')
    assert.equal(found.record.error, 16)
    assert.equal(found.record.mac.length, 0)
  })

  it('finds a TSIG record that is not last malformed', () => {
    const signed = signTsig(query(), KEY, { now: 1 }).message
    const withOpt = Buffer.concat([signed, Buffer.from('0000290200000000000000', 'hex')])
    withOpt.writeUInt16BE(2, 10)
    assert.equal(findTsig(withOpt), 'malformed')
    assert.equal(verifyTsig(withOpt, KEY, { now: 1 }).status, 'malformed')
  })

  it('parses name:base64secret keys', () => {
    assert.deepEqual(parseTsigKey('Transfer.Key.:c2VjcmV0'), { name: 'transfer.key', secret: Buffer.from('secret') })
    for (const bad of ['', 'nokey', ':c2VjcmV0', 'a..b:c2VjcmV0', 'k:', 'k:not base64', 'k:c2VjcmV0=']) {
      assert.equal(parseTsigKey(bad), null, bad)
    }
  })

  it('verification never throws on arbitrary bytes, nor on a signed message cut or changed anywhere', () => {
    const signed = signTsig(response(7, 4), KEY, { now: 1_800_000_000, requestMac: Buffer.alloc(32, 1) }).message
    const statuses = new Set(['unsigned', 'malformed', 'ok', 'error'])
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.option(fc.uint8Array({ maxLength: 40 })), (bytes, mac) => {
        const opts = { now: 1_800_000_000, ...(mac ? { requestMac: Buffer.from(mac) } : {}) }
        assert.ok(statuses.has(verifyTsig(Buffer.from(bytes), KEY, opts).status))
      }),
      { seed: 20261124, numRuns: 3000 },
    )
    fc.assert(
      // The id (bytes 0 and 1) is not signed as sent: the TSIG record holds the original one.
      fc.property(
        fc.nat(signed.length),
        fc.integer({ min: 2, max: signed.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        (cut, at, x) => {
          const changed = Buffer.from(signed)
          changed[at]! ^= x
          assert.ok(statuses.has(verifyTsig(signed.subarray(0, cut), KEY, { now: 1_800_000_000 }).status))
          assert.notEqual(
            verifyTsig(changed, KEY, { now: 1_800_000_000, requestMac: Buffer.alloc(32, 1) }).status,
            'ok',
          )
        },
      ),
      { seed: 20261124, numRuns: 3000 },
    )
  })
})

function pick(r: ReturnType<typeof verifyTsig>): [string, string | undefined] {
  return [r.status, r.status === 'error' ? r.error : undefined]
}
