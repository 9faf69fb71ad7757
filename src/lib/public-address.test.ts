import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { isIpLiteral, isLocalhostName, isPublicAddress } from './public-address.js'
import { embeddingForms, localhostName, privateV4 } from '../../test/helpers/addresses.js'

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, metadata, unique-local and mapped addresses', () => {
    for (const a of [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '224.0.0.1',
      '255.255.255.255',
      '192.0.2.1',
      'not an address',
    ])
      assert.equal(isPublicAddress(a), false, a)
  })

  it('accepts public unicast addresses of both families', () => {
    for (const a of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:93.184.216.34'])
      assert.equal(isPublicAddress(a), true, a)
  })

  it('reads an IPv4-mapped IPv6 address as its IPv4 one, and refuses every private IPv4 address', () => {
    fc.assert(fc.property(fc.ipV4(), (a) => assert.equal(isPublicAddress(`::ffff:${a}`), isPublicAddress(a), a)))
    const octet = fc.integer({ min: 0, max: 255 })
    const priv = fc.oneof(
      fc.tuple(fc.constant(10), octet, octet, octet),
      fc.tuple(fc.constant(127), octet, octet, octet),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
      fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
      fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
    )
    fc.assert(fc.property(priv, (parts) => assert.equal(isPublicAddress(parts.join('.')), false, parts.join('.'))))
  })

  it('never throws on any text, and only IP literals can be public', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.domain()), (t) => {
        if (isPublicAddress(t)) assert.ok(isIpLiteral(t), t)
      }),
    )
  })
})

describe('isPublicAddress, IPv6 forms that carry an IPv4 address', () => {
  it('refuses a private IPv4 address in every IPv6 form that embeds one', () => {
    fc.assert(
      fc.property(privateV4, (a) => {
        for (const [form, v6] of Object.entries(embeddingForms(a))) {
          assert.equal(isPublicAddress(v6), false, `${form} ${v6}`)
          assert.ok(isIpLiteral(`[${v6}]`), v6)
        }
      }),
    )
  })

  it('refuses IPv4-compatible addresses, as in [::127.0.0.1]', () => {
    for (const a of ['::127.0.0.1', '::7f00:1', '::10.0.0.1', '0:0:0:0:0:0:127.0.0.1', '::169.254.169.254'])
      assert.equal(isPublicAddress(a), false, a)
  })
})

describe('isLocalhostName', () => {
  it('is true for localhost and the names under it in any case, with or without trailing dots', () => {
    fc.assert(fc.property(localhostName, (n) => assert.ok(isLocalhostName(n), n)))
  })

  it('is false for other domain names', () => {
    fc.assert(fc.property(fc.domain(), (d) => assert.equal(isLocalhostName(d), /(^|\.)localhost\.*$/i.test(d), d)))
    for (const d of ['localhost.example', 'mylocalhost', 'localhostx.', 'example.com.'])
      assert.equal(isLocalhostName(d), false, d)
  })
})

describe('isIpLiteral', () => {
  it('accepts every IPv4 and IPv6 address, IPv6 with or without brackets, and no domain name', () => {
    fc.assert(fc.property(fc.ipV4(), (a) => assert.ok(isIpLiteral(a), a)))
    fc.assert(fc.property(fc.ipV6(), (a) => assert.ok(isIpLiteral(a) && isIpLiteral(`[${a}]`), a)))
    fc.assert(fc.property(fc.domain(), (d) => assert.equal(isIpLiteral(d), false, d)))
  })
})
