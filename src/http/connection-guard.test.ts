import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import { ConnectionCap } from './connection-guard.js'

// The counting by address block; the cap over real sockets on every listener is in test/timeouts.test.ts.

/** A socket as far as the cap looks at it: its remote address and its `close` event. */
const socketFrom = (remoteAddress: string | undefined) =>
  Object.assign(new EventEmitter(), { remoteAddress }) as unknown as Socket

/** How many of `n` new connections from `ip` the cap admits. */
const admitted = (cap: ConnectionCap, ip: string, n: number) =>
  Array.from({ length: n }, () => cap.admit(socketFrom(ip))).filter(Boolean).length

describe('ConnectionCap', () => {
  it('admits `max` open connections per IPv4 address and one more once one closes', () => {
    const cap = new ConnectionCap(2, [])
    const first = socketFrom('192.0.2.1')
    assert.equal(cap.admit(first), true)
    assert.equal(admitted(cap, '192.0.2.1', 3), 1)
    assert.equal(admitted(cap, '192.0.2.2', 3), 2)
    first.emit('close')
    assert.equal(admitted(cap, '192.0.2.1', 2), 1)
  })

  it('counts an IPv6 /64 as one address, and an IPv4-mapped address as its IPv4 address', () => {
    const cap = new ConnectionCap(2, [])
    assert.equal(admitted(cap, '2001:db8:1:2::1', 1), 1)
    assert.equal(admitted(cap, '2001:db8:1:2:ffff:ffff:ffff:fffe', 2), 1)
    assert.equal(admitted(cap, '2001:db8:1:3::1', 2), 2)
    assert.equal(admitted(cap, '198.51.100.7', 1), 1)
    assert.equal(admitted(cap, '::ffff:198.51.100.7', 2), 1)
  })

  it('does not count the trusted proxies (addresses and ranges, IPv4 and IPv6)', () => {
    const cap = new ConnectionCap(1, ['10.0.0.0/8', '2001:db8::5', '192.0.2.9'])
    for (const ip of ['10.1.2.3', '::ffff:10.9.9.9', '2001:db8::5', '192.0.2.9'])
      assert.equal(admitted(cap, ip, 5), 5, ip)
    assert.equal(admitted(cap, '2001:db8::6', 5), 1)
    assert.equal(admitted(cap, '11.0.0.1', 5), 1)
  })

  it('admits everything with max 0, and nothing already closed', () => {
    assert.equal(admitted(new ConnectionCap(0, []), '192.0.2.1', 100), 100)
    assert.equal(new ConnectionCap(5, []).admit(socketFrom(undefined)), false)
  })
})
