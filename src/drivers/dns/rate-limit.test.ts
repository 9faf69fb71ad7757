import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ResponseRateLimiter, prefixOf } from './rate-limit.js'

describe('response-rate limiting', () => {
  it('counts clients by /24 (IPv4, mapped IPv4 too) and /56 (IPv6)', () => {
    assert.equal(prefixOf('192.0.2.77'), '192.0.2.0/24')
    assert.equal(prefixOf('::ffff:192.0.2.77'), '192.0.2.0/24')
    assert.equal(prefixOf('2001:db8:aaaa:bbcc:1:2:3:4'), '2001:db8:aaaa:bb00::/56')
    assert.equal(prefixOf('2001:db8:aaaa:bbff::9'), '2001:db8:aaaa:bb00::/56')
  })

  it('limits one answer to one prefix to the rate, slips every Nth, and leaves other prefixes and answers alone', () => {
    let now = 1000
    const rrl = new ResponseRateLimiter(
      { responsesPerSecond: 5, slip: 2, windowSeconds: 3 },
      () => null,
      () => now,
    )
    const flood = Array.from({ length: 11 }, () => rrl.check('192.0.2.1', 'a'))
    assert.deepEqual(flood, ['send', 'send', 'send', 'send', 'send', 'drop', 'slip', 'drop', 'slip', 'drop', 'slip'])
    assert.equal(rrl.check('192.0.2.200', 'a'), 'drop', 'the same /24')
    assert.equal(rrl.check('192.0.3.1', 'a'), 'send', 'another /24')
    assert.equal(rrl.check('192.0.2.1', 'b'), 'send', 'another answer')
    // A second later the flood's debt (bounded by the window) is not yet paid back; after the window it is.
    now += 1
    assert.notEqual(rrl.check('192.0.2.1', 'a'), 'send')
    now += 3
    assert.equal(rrl.check('192.0.2.1', 'a'), 'send')
  })

  it('never limits with a rate of 0, and never slips with a slip of 0', () => {
    const off = new ResponseRateLimiter({ responsesPerSecond: 0, slip: 2, windowSeconds: 15 }, () => null)
    assert.ok(Array.from({ length: 100 }, () => off.check('192.0.2.1', 'a')).every((v) => v === 'send'))
    const noSlip = new ResponseRateLimiter(
      { responsesPerSecond: 1, slip: 0, windowSeconds: 15 },
      () => null,
      () => 0,
    )
    assert.deepEqual(
      Array.from({ length: 4 }, () => noSlip.check('192.0.2.1', 'a')),
      ['send', 'drop', 'drop', 'drop'],
    )
  })
})
