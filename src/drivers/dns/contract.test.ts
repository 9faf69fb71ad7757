import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Packet } from 'dns-packet'
import pino from 'pino'
import { queryTcp, queryUdp } from '../../../test/helpers/dns.js'
import { MemoryZones } from '../../../test/helpers/memory-zones.js'
import { describeWithPowerDns, startPowerDns } from '../../../test/helpers/powerdns.js'
import type { DnsDriver, ZoneSource } from './dns.js'
import { BuiltinDnsServer } from './builtin.js'
import { PowerDnsDriver } from './powerdns.js'

const dataOf = (p: Packet, type: string) =>
  (p.answers ?? []).filter((a) => a.type === type).map((a) => (a as unknown as { data: unknown }).data)
const rcodeOf = (p: Packet) => (p as Packet & { rcode: string }).rcode
const serialOf = (p: Packet) => (p.answers![0] as unknown as { data: { serial: number } }).data.serial

/** What a driver under test needs: the driver and, for one pushing to an external server, its teardown. */
export interface DnsContractSubject {
  driver: DnsDriver
  /**
   * The driver pushes zones to a server of its own process (PowerDNS): that server keeps answering after `stop()`,
   * which only ends the driver's own work.
   */
  external?: boolean
  close?(): Promise<void>
}

/** What every DNS driver must do; `make` builds a driver serving the zones of `zones`, answering on a free port. */
export function dnsDriverContract(label: string, make: (zones: ZoneSource) => Promise<DnsContractSubject>) {
  describe(`DnsDriver contract: ${label}`, () => {
    const zones = new MemoryZones()
    let subject: DnsContractSubject
    let driver: DnsDriver
    let zoneId: number
    const zone = 'contract.nl'

    before(async () => {
      zoneId = zones.add(zone, { serial: 7, records: [{ type: 'A', name: zone, value: '192.0.2.1' }] })
      subject = await make(zones)
      driver = subject.driver
    })
    after(async () => {
      await driver?.stop()
      await subject?.close?.()
    })

    test('not serving before start(); start() serves UDP and TCP on one port; start() again is a no-op', async () => {
      assert.equal(driver.address(), null)
      await driver.start()
      const addr = driver.address()
      assert.ok(addr && addr.port > 0)
      await driver.start()
      assert.deepEqual(driver.address(), addr)
      // As the DNS module tells the driver when a domain starts being served.
      await driver.publish({ domain: zone, kind: 'zone' })
      const udp = await queryUdp(addr.port, zone, 'SOA')
      const tcp = await queryTcp(addr.port, zone, 'SOA')
      for (const r of [udp, tcp]) assert.equal(serialOf(r), 7)
    })

    test('publish() of a records change naming the owner names: the next answer has it', async () => {
      const port = driver.address()!.port
      await queryUdp(port, `new.${zone}`, 'A')
      zones.addRecord(zoneId, { type: 'A', name: `new.${zone}`, value: '192.0.2.2' })
      await driver.publish({ domain: zone, kind: 'records', names: [`new.${zone}`] })
      assert.deepEqual(dataOf(await queryUdp(port, `new.${zone}`, 'A'), 'A'), ['192.0.2.2'])
      assert.equal(serialOf(await queryUdp(port, zone, 'SOA')), 8)
    })

    test('publish() of a records change without names: the next answer has it', async () => {
      const port = driver.address()!.port
      await queryUdp(port, `other.${zone}`, 'TXT')
      zones.addRecord(zoneId, { type: 'TXT', name: `other.${zone}`, value: 'v=contract' })
      await driver.publish({ domain: zone, kind: 'records' })
      assert.deepEqual(dataOf(await queryUdp(port, `other.${zone}`, 'TXT'), 'TXT').map(String), ['v=contract'])
    })

    test('publish() of a zone change (nameservers): the next answer has the new apex NS and serial', async () => {
      const port = driver.address()!.port
      assert.deepEqual(dataOf(await queryUdp(port, zone, 'NS'), 'NS').sort(), ['ns1.hostapi.test', 'ns2.hostapi.test'])
      zones.setNameservers(zoneId, ['ns.elsewhere.example', 'ns2.elsewhere.example'])
      await driver.publish({ domain: zone, kind: 'zone' })
      const ns = dataOf(await queryUdp(port, zone, 'NS'), 'NS').sort()
      assert.deepEqual(ns, ['ns.elsewhere.example', 'ns2.elsewhere.example'])
      assert.equal(serialOf(await queryUdp(port, zone, 'SOA')), 10)
    })

    test('publish() of a removal: the zone is no longer answered; served again once the port has it', async () => {
      const port = driver.address()!.port
      assert.equal(rcodeOf(await queryUdp(port, zone, 'A')), 'NOERROR')
      zones.remove(zoneId)
      await driver.publish({ domain: zone, kind: 'removed' })
      assert.equal(rcodeOf(await queryUdp(port, zone, 'A')), 'REFUSED')
      zoneId = zones.add(zone, { serial: 20, records: [{ type: 'A', name: zone, value: '192.0.2.3' }] })
      await driver.publish({ domain: zone, kind: 'zone' })
      assert.deepEqual(dataOf(await queryUdp(port, zone, 'A'), 'A'), ['192.0.2.3'])
      assert.equal(serialOf(await queryUdp(port, zone, 'SOA')), 20)
    })

    test('publish() of an unknown domain or in any case form does not throw, whatever the kind', async () => {
      for (const domain of ['unknown-domain.example', 'CONTRACT.NL.']) {
        await driver.publish({ domain, kind: 'records', names: [`www.${domain}`] })
        await driver.publish({ domain, kind: 'records' })
        await driver.publish({ domain, kind: 'zone' })
        await driver.publish({ domain, kind: 'removed' })
      }
    })

    test('stop() frees the port (an external server answers on); stop() twice is fine; start() serves', async () => {
      const port = driver.address()!.port
      await driver.stop()
      assert.equal(driver.address(), null)
      if (!subject.external) await assert.rejects(queryUdp(port, zone, 'A', { timeoutMs: 300 }))
      await driver.stop()
      await driver.start()
      const again = await queryUdp(driver.address()!.port, zone, 'A')
      assert.equal(again.answers!.length, 1)
    })
  })
}

dnsDriverContract('builtin', async (zones) => ({
  driver: new BuiltinDnsServer(zones, { host: '127.0.0.1', port: 0 }, pino({ level: 'silent' })),
}))

describeWithPowerDns('DnsDriver contract: powerdns (a real pdns_server)', () => {
  dnsDriverContract('powerdns', async (zones) => {
    const pdns = await startPowerDns()
    const opts = { url: pdns.url, apiKey: pdns.apiKey, dnsAddress: { host: '127.0.0.1', port: pdns.dnsPort } }
    const driver = new PowerDnsDriver(opts, zones, pino({ level: 'silent' }))
    return { driver, external: true, close: () => pdns.close() }
  })
})

describe('BuiltinDnsServer switched off (port null)', () => {
  test('start() does nothing, address() is null, publish() still resolves', async () => {
    const off = new BuiltinDnsServer(new MemoryZones(), { host: '127.0.0.1', port: null }, pino({ level: 'silent' }))
    await off.start()
    assert.equal(off.address(), null)
    await off.publish({ domain: 'example.nl', kind: 'zone' })
    await off.stop()
  })
})

describe('BuiltinDnsServer on a port in use', () => {
  test('start() fails with a text naming the address and the settings', async () => {
    const first = new BuiltinDnsServer(new MemoryZones(), { host: '127.0.0.1', port: 0 }, pino({ level: 'silent' }))
    await first.start()
    try {
      const port = first.address()!.port
      const second = new BuiltinDnsServer(new MemoryZones(), { host: '127.0.0.1', port }, pino({ level: 'silent' }))
      await assert.rejects(
        second.start(),
        new RegExp(
          `cannot listen on 127\\.0\\.0\\.1:${port} \\(HOSTAPI_DNS_HOST/HOSTAPI_DNS_PORT; port 0 switches it off\\): .*EADDRINUSE`,
        ),
      )
      assert.equal(second.address(), null)
    } finally {
      await first.stop()
    }
  })
})
