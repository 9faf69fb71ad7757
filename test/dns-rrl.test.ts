// Response-rate limiting of the built-in DNS server, over real UDP on loopback: a flood from one client prefix gets
// its answers capped, every second limited one truncated (TC=1), while another prefix is answered in full.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import dgram from 'node:dgram'
import { randomBytes } from 'node:crypto'
import dnsPacket, { type Packet } from 'dns-packet'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { freePort, insertZone } from './helpers/dns.js'
import { eventually, pace } from './helpers/wait.js'

const Z = 'rrl-test.nl'
const RATE = 5

interface Tally {
  full: number
  truncated: number
  other: number
}

/**
 * Sends `count` queries from `source` (a loopback address) in bursts over about `ms` milliseconds, and counts the
 * answers arriving until shortly after: full answers (TC clear, with records or a denial), truncated ones (TC set,
 * no records).
 */
async function flood(port: number, source: string, names: () => string, type: string, count: number, ms: number) {
  const sock = dgram.createSocket('udp4')
  await new Promise<void>((resolve) => sock.bind(0, source, resolve))
  const tally: Tally = { full: 0, truncated: 0, other: 0 }
  sock.on('message', (msg) => {
    const p = dnsPacket.decode(msg) as Packet & { rcode?: string }
    const tc = ((p.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) !== 0
    if (tc && (p.answers ?? []).length === 0 && (p.authorities ?? []).length === 0) tally.truncated++
    else if (!tc && ['NOERROR', 'NXDOMAIN'].includes(p.rcode ?? '')) tally.full++
    else tally.other++
  })
  const bursts = Math.min(10, count)
  for (let b = 0; b < bursts; b++) {
    for (let i = 0; i < count / bursts; i++) {
      const q = dnsPacket.encode({
        id: (b * 100 + i) & 0xffff,
        type: 'query',
        questions: [{ name: names(), type }],
      } as Packet)
      sock.send(q, port, '127.0.0.1')
    }
    await pace(ms / bursts)
  }
  // Every answer the server sends has come once none arrived for 500 ms.
  let seen = -1
  const total = () => tally.truncated + tally.full + tally.other
  const quiet = () => {
    const before = seen
    seen = total()
    return before === seen
  }
  await eventually(quiet, { what: 'the last answer', intervalMs: 500 })
  sock.close()
  return tally
}

forEachDialect((dialect) => {
  describe(`DNS response-rate limiting (${dialect})`, () => {
    let t: TestApp
    let port: number

    before(async () => {
      port = await freePort()
      t = await startTestApp(dialect, {
        env: {
          HOSTAPI_DNS_PORT: String(port),
          HOSTAPI_DNS_RRL_RESPONSES_PER_SECOND: String(RATE),
          HOSTAPI_DNS_RRL_SLIP: '2',
          HOSTAPI_DNS_RRL_WINDOW: '2',
        },
      })
      const account = await t.account()
      await insertZone(t.ctx.db, account.accountId, Z, {
        records: [{ type: 'A', name: `www.${Z}`, value: '192.0.2.80' }],
      })
    })
    after(() => t?.close())

    it('caps one answer to one prefix, slips truncated answers, and answers another prefix in full', async () => {
      const www = () => `www.${Z}`
      // The flood and, meanwhile, a few queries from another /24 at well under the rate.
      const [flooded, other] = await Promise.all([
        flood(port, '127.0.0.2', www, 'A', 200, 1000),
        flood(port, '127.1.0.2', www, 'A', 4, 1000),
      ])
      // The burst and the rate over the flood's time (about a second, 2 s allowed for a slow machine).
      assert.ok(flooded.full >= 1 && flooded.full <= RATE * 3, JSON.stringify(flooded))
      assert.ok(flooded.truncated >= 20, JSON.stringify(flooded))
      assert.ok(flooded.full + flooded.truncated < 200, JSON.stringify(flooded))
      assert.equal(flooded.other, 0)
      assert.deepEqual(other, { full: 4, truncated: 0, other: 0 })
    })

    it('counts every denial of a zone as one answer: random names do not escape the limit', async () => {
      const random = () => `${randomBytes(6).toString('hex')}.${Z}`
      const flooded = await flood(port, '127.0.1.2', random, 'TXT', 200, 1000)
      assert.ok(flooded.full <= RATE * 3, JSON.stringify(flooded))
      assert.ok(flooded.truncated >= 20, JSON.stringify(flooded))
    })

    it('does not limit TCP, where a truncated client retries', async () => {
      const { queryTcp } = await import('./helpers/dns.js')
      for (let i = 0; i < RATE * 3; i++) {
        const r = await queryTcp(port, `www.${Z}`, 'A')
        assert.equal(r.answers?.length, 1)
      }
    })
  })
})
