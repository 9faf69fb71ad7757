import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import ipaddr from 'ipaddr.js'
import { addressBlock } from './auth-throttle.js'

const run = { seed: 20261123, numRuns: 2000 }

describe('addressBlock', () => {
  it('answers a string for any text, never throwing', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => typeof addressBlock(text) === 'string'),
      run,
    )
  })

  it('keeps an IPv4 address, and its IPv4-mapped IPv6 form, as the address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const written = ipaddr.parse(ip).toString()
        assert.equal(addressBlock(ip), written)
        assert.equal(addressBlock(`::ffff:${ip}`), written)
      }),
      run,
    )
  })

  it('gives every IPv6 address of one /64 the same block, and other /64s other blocks', () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.ipV6(), (a, b) => {
        const pa = ipaddr.parse(a) as ipaddr.IPv6
        const pb = ipaddr.parse(b) as ipaddr.IPv6
        if (pa.isIPv4MappedAddress() || pb.isIPv4MappedAddress()) return
        const sameHalf = new ipaddr.IPv6([...pa.parts.slice(0, 4), ...pb.parts.slice(4)]).toString()
        assert.equal(addressBlock(sameHalf), addressBlock(a))
        const samePrefix = pa.parts.slice(0, 4).every((p, i) => p === pb.parts[i])
        assert.equal(addressBlock(a) === addressBlock(b), samePrefix)
      }),
      run,
    )
  })
})
