import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import ipaddr from 'ipaddr.js'
import { ipAllowed, normaliseIpEntry } from './keys.js'

const RUNS = { seed: 20261123, numRuns: 2000 }

/** Addresses and ranges as people type them, and as they mistype them. */
const entry = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.ipV4Extended(),
  fc.tuple(fc.oneof(fc.ipV4(), fc.ipV6()), fc.integer({ min: -5, max: 140 })).map(([a, b]) => `${a}/${b}`),
  fc.ipV4().map((a) => `::ffff:${a}`),
  fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 140 })).map(([a, b]) => `::ffff:${a}/${b}`),
  fc.ipV6().map((a) => `${a}%eth0`),
  fc
    .tuple(fc.constantFrom(' ', '\t', '\n', ''), fc.ipV4(), fc.constantFrom(' ', '/', '//', '/0x10', '/ 8', '/08', ''))
    .map(([s, a, t]) => `${s}${a}${t}`),
  fc.string({ unit: fc.constantFrom('0', '1', '9', 'f', ':', '.', '/', '%', 'x', ' '), maxLength: 45 }),
  fc.string({ unit: 'binary', maxLength: 64 }),
)

describe('API key whitelist entries (properties)', () => {
  it('normalises any text to null or an entry that reads back as itself', () => {
    fc.assert(
      fc.property(entry, (text) => {
        const n = normaliseIpEntry(text)
        if (n === null) return
        assert.equal(typeof n, 'string')
        assert.equal(normaliseIpEntry(n), n, `${JSON.stringify(text)} → ${n}`)
        if (n.includes('/')) assert.ok(ipaddr.isValidCIDR(n), n)
        else assert.ok(ipaddr.isValid(n), n)
      }),
      RUNS,
    )
  })

  it('lets an address in through its own entry and through any range around it', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.integer({ min: 0, max: 128 }), (ip, bits) => {
        const one = normaliseIpEntry(ip)
        assert.notEqual(one, null, ip)
        assert.ok(ipAllowed(ip, [one!]), `${ip} in [${one}]`)
        const max = ip.includes(':') ? 128 : 32
        const range = normaliseIpEntry(`${ip}/${bits % (max + 1)}`)
        assert.notEqual(range, null)
        assert.ok(ipAllowed(ip, [range!]), `${ip} in [${range}]`)
      }),
      RUNS,
    )
  })

  it('reads the IPv4 form of an IPv4-mapped address and range', () => {
    assert.equal(normaliseIpEntry('::ffff:192.0.2.1'), '192.0.2.1')
    assert.equal(normaliseIpEntry('::ffff:192.0.2.0/120'), '192.0.2.0/24')
    assert.ok(ipAllowed('::ffff:192.0.2.7', ['192.0.2.0/24']))
    // A mapped range wider than the mapped block stays IPv6, and still holds the IPv4 callers in it.
    assert.equal(normaliseIpEntry('::ffff:1.2.3.4/80'), '::ffff:102:304/80')
    assert.ok(ipAllowed('192.0.2.7', ['::/0']))
    assert.ok(!ipAllowed('192.0.2.7', ['2001:db8::/32']))
  })

  it('takes only addresses written in the usual way', () => {
    for (const odd of [
      '010.0.0.1',
      '0x7f.0.0.1',
      '127.1',
      '1',
      '4294967295',
      '1.2.3.4/033',
      'fe80::1%eth0',
      '1.2.3.4/-1',
      '1.2.3.4/33',
      '::1/129',
      '1.2.3.4/+8',
    ]) {
      assert.equal(normaliseIpEntry(odd), null, odd)
    }
  })

  it('answers true or false for any caller address and list, never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(entry, fc.string()),
        fc.array(fc.oneof(entry, fc.string()), { maxLength: 5 }),
        (ip, list) => {
          assert.equal(typeof ipAllowed(ip, list), 'boolean')
        },
      ),
      RUNS,
    )
  })
})
