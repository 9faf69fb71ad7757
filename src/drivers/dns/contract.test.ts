import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import pino from 'pino'
import type { Db } from '../../db/database.js'
import { forEachDialect, startTestApp, type TestApp } from '../../../test/helpers/app.js'
import { addRecords, bumpSerial, insertZone, queryTcp, queryUdp } from '../../../test/helpers/dns.js'
import type { DnsDriver } from './dns.js'
import { BuiltinDnsServer } from './builtin.js'

/** What every DNS driver must do; `make` builds a driver serving the given database on a free port. */
function dnsDriverContract(label: string, make: (db: Db) => DnsDriver) {
  forEachDialect((dialect) => {
    describe(`DnsDriver contract: ${label} (${dialect})`, () => {
      let t: TestApp
      let driver: DnsDriver
      let domainId: number
      const zone = 'contract.nl'

      before(async () => {
        t = await startTestApp(dialect)
        const account = await t.account()
        domainId = await insertZone(t.ctx.db, account.accountId, zone, {
          serial: 7,
          records: [{ type: 'A', name: zone, value: '192.0.2.1' }],
        })
        driver = make(t.ctx.db)
      })
      after(async () => {
        await driver?.stop()
        await t?.close()
      })

      test('not serving before start(); start() serves UDP and TCP on one port; a second start() changes nothing', async () => {
        assert.equal(driver.address(), null)
        await driver.start()
        const addr = driver.address()
        assert.ok(addr && addr.port > 0)
        await driver.start()
        assert.deepEqual(driver.address(), addr)
        const udp = await queryUdp(addr.port, zone, 'SOA')
        const tcp = await queryTcp(addr.port, zone, 'SOA')
        for (const r of [udp, tcp]) {
          assert.equal((r.answers![0] as unknown as { data: { serial: number } }).data.serial, 7)
        }
      })

      test('publish() after a committed change: the next answer has it', async () => {
        const port = driver.address()!.port
        await queryUdp(port, `new.${zone}`, 'A')
        await addRecords(t.ctx.db, domainId, [{ type: 'A', name: `new.${zone}`, value: '192.0.2.2' }])
        await bumpSerial(t.ctx.db, domainId)
        await driver.publish(zone)
        const r = await queryUdp(port, `new.${zone}`, 'A')
        assert.deepEqual(r.answers!.map((a) => (a as unknown as { data: string }).data), ['192.0.2.2'])
        const soa = await queryUdp(port, zone, 'SOA')
        assert.equal((soa.answers![0] as unknown as { data: { serial: number } }).data.serial, 8)
      })

      test('publish() of an unknown domain or in any case form does not throw', async () => {
        await driver.publish('unknown-domain.example')
        await driver.publish('CONTRACT.NL.')
      })

      test('stop() releases the port; a second stop() is fine; start() again serves again', async () => {
        const port = driver.address()!.port
        await driver.stop()
        assert.equal(driver.address(), null)
        await assert.rejects(queryUdp(port, zone, 'A', { timeoutMs: 300 }))
        await driver.stop()
        await driver.start()
        const again = await queryUdp(driver.address()!.port, zone, 'A')
        assert.equal(again.answers!.length, 1)
      })
    })
  })
}

dnsDriverContract('builtin', (db) => new BuiltinDnsServer(db, { host: '127.0.0.1', port: 0 }, pino({ level: 'silent' })))

describe('BuiltinDnsServer switched off (port null)', () => {
  test('start() does nothing, address() is null, publish() still resolves', async () => {
    const off = new BuiltinDnsServer({} as Db, { host: '127.0.0.1', port: null }, pino({ level: 'silent' }))
    await off.start()
    assert.equal(off.address(), null)
    await off.publish('example.nl')
    await off.stop()
  })
})

describe('BuiltinDnsServer on a port in use', () => {
  test('start() fails with a text naming the address and the settings', async () => {
    const first = new BuiltinDnsServer({} as Db, { host: '127.0.0.1', port: 0 }, pino({ level: 'silent' }))
    await first.start()
    try {
      const port = first.address()!.port
      const second = new BuiltinDnsServer({} as Db, { host: '127.0.0.1', port }, pino({ level: 'silent' }))
      await assert.rejects(second.start(), new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(HOSTAPI_DNS_HOST/HOSTAPI_DNS_PORT; port 0 switches it off\\): .*EADDRINUSE`))
      assert.equal(second.address(), null)
    } finally {
      await first.stop()
    }
  })
})
