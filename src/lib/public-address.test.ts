import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { isPublicAddress } from './public-address.js'

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
})
