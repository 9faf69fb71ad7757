import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import dnsPacket, { type Answer, type Packet } from 'dns-packet'
import pino from 'pino'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { addRecords, bumpSerial, dig, freePort, insertZone, queryTcp, queryUdp, txtOf } from './helpers/dns.js'
import { eventually } from './helpers/wait.js'
import { openDatabase } from '../src/db/database.js'
import { BuiltinDnsServer } from '../src/drivers/dns/builtin.js'
import { zoneSourceOf } from '../src/modules/domains/dns/zone-source.js'

const Z = 'example.nl'
const SHA256 = 'ab'.repeat(32)
const LONG_TXT = `v=DKIM1; k=rsa; p=${'M'.repeat(582)}`

const records = [
  { type: 'A', name: Z, value: '192.0.2.1', ttl: 300 },
  { type: 'AAAA', name: Z, value: '2001:db8::1' },
  { type: 'MX', name: Z, value: '10 mail.example.nl.' },
  { type: 'MX', name: Z, value: '20 mx.backup.example.net.' },
  { type: 'TXT', name: Z, value: 'v=spf1 -all' },
  { type: 'CAA', name: Z, value: '0 issue "letsencrypt.org"' },
  { type: 'A', name: `mail.${Z}`, value: '192.0.2.25' },
  { type: 'CNAME', name: `www.${Z}`, value: `${Z}.` },
  { type: 'CNAME', name: `alias.${Z}`, value: `www.${Z}.` },
  { type: 'CNAME', name: `ext.${Z}`, value: 'target.example.net.' },
  { type: 'CNAME', name: `loop1.${Z}`, value: `loop2.${Z}.` },
  { type: 'CNAME', name: `loop2.${Z}`, value: `loop1.${Z}.` },
  { type: 'A', name: `*.wild.${Z}`, value: '192.0.2.50' },
  { type: 'TXT', name: `*.wild.${Z}`, value: 'wildcard' },
  { type: 'A', name: `host.wild.${Z}`, value: '192.0.2.51' },
  { type: 'SRV', name: `_sip._tcp.${Z}`, value: `10 60 5060 sip.${Z}.` },
  { type: 'TLSA', name: `_443._tcp.www2.${Z}`, value: `3 1 1 ${SHA256}` },
  { type: 'SSHFP', name: `host.${Z}`, value: `4 2 ${SHA256}` },
  { type: 'NS', name: `sub.${Z}`, value: `ns1.sub.${Z}.` },
  { type: 'A', name: `ns1.sub.${Z}`, value: '192.0.2.53' },
  { type: 'DS', name: `sub.${Z}`, value: `12345 13 2 ${SHA256}` },
  { type: 'TXT', name: `dkim._domainkey.${Z}`, value: LONG_TXT },
  { type: 'A', name: `a.b.c.${Z}`, value: '192.0.2.99' },
]

const answersOf = (p: Packet, type?: string) => (p.answers ?? []).filter((a) => !type || a.type === type)
const dataOf = (p: Packet, type: string) => answersOf(p, type).map((a) => (a as Answer & { data: unknown }).data)
const rcodeOf = (p: Packet) => (p as Packet & { rcode: string }).rcode
const aa = (p: Packet) => ((p.flags ?? 0) & dnsPacket.AUTHORITATIVE_ANSWER) !== 0

forEachDialect((dialect) => {
  describe(`built-in DNS server (${dialect})`, () => {
    let t: TestApp
    let port: number
    let domainId: number
    let accountId: number

    before(async () => {
      port = await freePort()
      t = await startTestApp(dialect, { env: { HOSTAPI_DNS_PORT: String(port) } })
      const account = await t.account()
      accountId = account.accountId
      domainId = await insertZone(t.ctx.db, accountId, Z, {
        serial: 2026112201,
        nameservers: [{ hostname: 'ns1.hostapi.test' }, { hostname: 'ns2.hostapi.test.' }],
        records,
      })
      await insertZone(t.ctx.db, accountId, 'cancelled.nl', {
        status: 'cancelled',
        records: [{ type: 'A', name: 'cancelled.nl', value: '192.0.2.7' }],
      })
      await insertZone(t.ctx.db, accountId, 'leaving.nl', {
        status: 'pending_cancellation',
        records: [{ type: 'A', name: 'leaving.nl', value: '192.0.2.8' }],
      })
    })
    after(async () => {
      await t?.close()
    })

    test('the server started with the app listens on the configured port', () => {
      assert.deepEqual(t.ctx.drivers.dns.address(), { host: '127.0.0.1', port })
    })

    test('SOA from the domain row (serial) and apex NS from its nameservers, with AA, over UDP (dig)', async () => {
      const soa = await dig(port, '+norec', 'SOA', Z)
      assert.match(soa, /status: NOERROR/)
      assert.match(soa, /flags: qr aa;/)
      assert.match(
        soa,
        /example\.nl\.\s+3600\s+IN\s+SOA\s+ns1\.hostapi\.test\. hostmaster\.example\.nl\. 2026112201 10800 3600 1209600 300/,
      )
      const ns = await dig(port, '+short', 'NS', Z)
      assert.deepEqual(ns.trim().split('\n').sort(), ['ns1.hostapi.test.', 'ns2.hostapi.test.'])
    })

    test('every record type is answered from the tables, over UDP and TCP', async () => {
      for (const q of [queryUdp, queryTcp]) {
        assert.deepEqual(dataOf(await q(port, Z, 'A'), 'A'), ['192.0.2.1'])
        assert.equal((answersOf(await q(port, Z, 'A'))[0] as Answer & { ttl: number }).ttl, 300)
        assert.deepEqual(dataOf(await q(port, Z, 'AAAA'), 'AAAA'), ['2001:db8::1'])
        assert.deepEqual(dataOf(await q(port, Z, 'MX'), 'MX'), [
          { preference: 10, exchange: 'mail.example.nl' },
          { preference: 20, exchange: 'mx.backup.example.net' },
        ])
        assert.deepEqual(txtOf(await q(port, Z, 'TXT')), ['v=spf1 -all'])
        const caa = dataOf(await q(port, Z, 'CAA'), 'CAA')[0] as { flags: number; tag: string; value: string }
        assert.deepEqual([caa.flags, caa.tag, caa.value], [0, 'issue', 'letsencrypt.org'])
        assert.deepEqual(dataOf(await q(port, `_sip._tcp.${Z}`, 'SRV'), 'SRV'), [
          { priority: 10, weight: 60, port: 5060, target: 'sip.example.nl' },
        ])
        const tlsa = dataOf(await q(port, `_443._tcp.www2.${Z}`, 'TLSA'), 'TLSA')[0] as {
          usage: number
          certificate: Buffer
        }
        assert.equal(tlsa.usage, 3)
        assert.equal(tlsa.certificate.toString('hex'), SHA256)
        const sshfp = dataOf(await q(port, `host.${Z}`, 'SSHFP'), 'SSHFP')[0] as {
          algorithm: number
          hash: number
          fingerprint: string
        }
        assert.deepEqual([sshfp.algorithm, sshfp.hash, sshfp.fingerprint.toLowerCase()], [4, 2, SHA256])
        const ds = dataOf(await q(port, `sub.${Z}`, 'DS'), 'DS')[0] as { keyTag: number; digest: Buffer }
        assert.equal(ds.keyTag, 12345)
        assert.equal(ds.digest.toString('hex'), SHA256)
      }
      const digOut = await dig(port, '+short', 'CAA', Z)
      assert.equal(digOut.trim(), '0 issue "letsencrypt.org"')
    })

    test('NXDOMAIN and NODATA carry the SOA in the authority section, with AA', async () => {
      const nx = await queryUdp(port, `nope.${Z}`, 'A')
      assert.equal(rcodeOf(nx), 'NXDOMAIN')
      assert.ok(aa(nx))
      assert.equal(nx.answers!.length, 0)
      assert.equal(nx.authorities![0]!.type, 'SOA')
      assert.equal(nx.authorities![0]!.name, Z)
      assert.equal(nx.authorities![0]!.ttl, 300)

      const nodata = await queryUdp(port, Z, 'SRV')
      assert.equal(rcodeOf(nodata), 'NOERROR')
      assert.ok(aa(nodata))
      assert.equal(nodata.answers!.length, 0)
      assert.equal(nodata.authorities![0]!.type, 'SOA')

      // b.c.example.nl has no records but a name below it does: an empty non-terminal, so NODATA.
      const ent = await queryUdp(port, `b.c.${Z}`, 'A')
      assert.equal(rcodeOf(ent), 'NOERROR')
      assert.equal(ent.answers!.length, 0)
      assert.match(await dig(port, 'A', `nope.${Z}`), /status: NXDOMAIN/)
    })

    test('REFUSED for names outside the served zones, and for zones not active', async () => {
      for (const name of ['example.com', 'www.example.org', 'nl', 'cancelled.nl']) {
        const r = await queryUdp(port, name, 'A')
        assert.equal(rcodeOf(r), 'REFUSED', name)
        assert.ok(!aa(r))
        assert.equal(r.answers!.length, 0)
      }
      assert.deepEqual(dataOf(await queryUdp(port, 'leaving.nl', 'A'), 'A'), ['192.0.2.8'])
    })

    test('wildcards synthesise records for names that do not exist, not for names that do', async () => {
      const w = await queryUdp(port, `anything.wild.${Z}`, 'A')
      assert.deepEqual(dataOf(w, 'A'), ['192.0.2.50'])
      assert.equal(w.answers![0]!.name, `anything.wild.${Z}`)
      assert.ok(aa(w))
      assert.deepEqual(dataOf(await queryUdp(port, `deep.er.wild.${Z}`, 'A'), 'A'), ['192.0.2.50'])
      assert.deepEqual(txtOf(await queryUdp(port, `x.wild.${Z}`, 'TXT')), ['wildcard'])
      assert.deepEqual(dataOf(await queryUdp(port, `host.wild.${Z}`, 'A'), 'A'), ['192.0.2.51'])
      const exists = await queryUdp(port, `host.wild.${Z}`, 'TXT')
      assert.equal(rcodeOf(exists), 'NOERROR')
      assert.equal(exists.answers!.length, 0)
      const nodata = await queryUdp(port, `x.wild.${Z}`, 'MX')
      assert.equal(rcodeOf(nodata), 'NOERROR')
      assert.equal(nodata.answers!.length, 0)
    })

    test('CNAMEs are chased inside the zone, not outside it, and loops end', async () => {
      const chain = await queryUdp(port, `alias.${Z}`, 'A')
      assert.deepEqual(
        chain.answers!.map((a) => `${a.name} ${a.type} ${(a as Answer & { data: unknown }).data}`),
        [`alias.${Z} CNAME www.${Z}`, `www.${Z} CNAME ${Z}`, `${Z} A 192.0.2.1`],
      )
      const ext = await queryUdp(port, `ext.${Z}`, 'A')
      assert.deepEqual(
        ext.answers!.map((a) => a.type),
        ['CNAME'],
      )
      assert.equal(rcodeOf(ext), 'NOERROR')
      const asked = await queryUdp(port, `www.${Z}`, 'CNAME')
      assert.deepEqual(dataOf(asked, 'CNAME'), [Z])
      const loop = await queryUdp(port, `loop1.${Z}`, 'A')
      assert.deepEqual(
        loop.answers!.map((a) => a.name),
        [`loop1.${Z}`, `loop2.${Z}`],
      )
    })

    test('delegations answer with a referral and glue; the DS at the cut is ours', async () => {
      const r = await queryUdp(port, `www.sub.${Z}`, 'A')
      assert.equal(rcodeOf(r), 'NOERROR')
      assert.ok(!aa(r))
      assert.equal(r.answers!.length, 0)
      assert.deepEqual(
        r.authorities!.map((a) => `${a.name} ${a.type}`),
        [`sub.${Z} NS`],
      )
      assert.deepEqual(
        r.additionals!.map((a) => `${a.name} ${(a as Answer & { data: unknown }).data}`),
        [`ns1.sub.${Z} 192.0.2.53`],
      )
      assert.ok(aa(await queryUdp(port, `sub.${Z}`, 'DS')))
    })

    test('TXT over 255 bytes is split into strings; too big for UDP → TC, complete over TCP', async () => {
      const udp = await queryUdp(port, `dkim._domainkey.${Z}`, 'TXT')
      assert.ok(((udp.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) !== 0, 'TC set over plain UDP (512 bytes)')
      assert.equal(udp.answers!.length, 0)
      const tcp = await queryTcp(port, `dkim._domainkey.${Z}`, 'TXT')
      const strings = (tcp.answers![0] as Answer & { data: Buffer[] }).data
      assert.deepEqual(
        strings.map((b) => b.length),
        [255, 255, 90],
      )
      assert.deepEqual(txtOf(tcp), [LONG_TXT])
      // With EDNS (1232 bytes) it fits in UDP.
      const edns = await queryUdp(port, `dkim._domainkey.${Z}`, 'TXT', { edns: 4096 })
      assert.deepEqual(txtOf(edns), [LONG_TXT])
      // dig retries over TCP by itself after TC.
      const out = await dig(port, '+noedns', '+short', 'TXT', `dkim._domainkey.${Z}`)
      assert.equal(out.trim().split('" "').length, 3)
    })

    test('EDNS: an OPT record comes back; an unknown EDNS version gets BADVERS', async () => {
      const r = await queryUdp(port, Z, 'A', { edns: 4096 })
      const opt = r.additionals!.find((a) => a.type === 'OPT') as (Answer & { udpPayloadSize: number }) | undefined
      assert.ok(opt)
      assert.equal(opt.udpPayloadSize, 1232)
      const bad = await queryUdp(port, Z, 'A', { edns: 4096, ednsVersion: 1 })
      const badOpt = bad.additionals!.find((a) => a.type === 'OPT') as Answer & { extendedRcode: number }
      assert.equal(badOpt.extendedRcode, 1)
      assert.equal(bad.answers!.length, 0)
      assert.match(await dig(port, '+edns=1', '+noednsneg', 'A', Z), /status: BADVERS/)
    })

    test('in-zone nameservers of the domain are answered with their addresses, also as glue', async () => {
      const zone = 'selfhosted.nl'
      await insertZone(t.ctx.db, accountId, zone, {
        nameservers: [
          { hostname: `ns1.${zone}`, ipv4: '192.0.2.101', ipv6: '2001:db8::101' },
          { hostname: 'ns2.elsewhere.net', ipv4: '192.0.2.102' },
        ],
      })
      const ns = await queryUdp(port, zone, 'NS')
      assert.deepEqual(dataOf(ns, 'NS'), [`ns1.${zone}`, 'ns2.elsewhere.net'])
      assert.deepEqual(
        ns.additionals!.map((a) => `${a.name} ${a.type}`),
        [`ns1.${zone} A`, `ns1.${zone} AAAA`],
      )
      assert.deepEqual(dataOf(await queryUdp(port, `ns1.${zone}`, 'A'), 'A'), ['192.0.2.101'])
      assert.deepEqual(dataOf(await queryTcp(port, `ns1.${zone}`, 'AAAA'), 'AAAA'), ['2001:db8::101'])
      assert.equal(rcodeOf(await queryUdp(port, 'ns2.elsewhere.net', 'A')), 'REFUSED')
    })

    test('ANY: only over TCP (TC over UDP), then every record set at the name', async () => {
      const udp = await queryUdp(port, Z, 'ANY')
      assert.ok(((udp.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) !== 0)
      assert.equal(udp.answers!.length, 0)
      const tcp = await queryTcp(port, Z, 'ANY')
      assert.deepEqual([...new Set(tcp.answers!.map((a) => a.type))], ['SOA', 'NS', 'A', 'AAAA', 'MX', 'TXT', 'CAA'])
    })

    test('several queries on one TCP connection, sent in one write, are all answered', async () => {
      const net = await import('node:net')
      const ids = [11, 22, 33]
      const names = [Z, `www.${Z}`, `nope.${Z}`]
      const frames = ids.map((id, i) => {
        const q = dnsPacket.encode({ id, type: 'query', questions: [{ name: names[i]!, type: 'A' }] })
        const prefix = Buffer.alloc(2)
        prefix.writeUInt16BE(q.length)
        return Buffer.concat([prefix, q])
      })
      const replies = await new Promise<Packet[]>((resolve, reject) => {
        const sock = net.connect(port, '127.0.0.1', () => sock.write(Buffer.concat(frames)))
        let data = Buffer.alloc(0)
        const out: Packet[] = []
        sock.on('error', reject)
        sock.on('data', (chunk) => {
          data = Buffer.concat([data, chunk])
          while (data.length >= 2 && data.length >= 2 + data.readUInt16BE(0)) {
            out.push(dnsPacket.decode(data.subarray(2, 2 + data.readUInt16BE(0))))
            data = data.subarray(2 + data.readUInt16BE(0))
          }
          if (out.length === 3) {
            sock.end()
            resolve(out)
          }
        })
      })
      const byId = new Map(replies.map((r) => [r.id, r]))
      assert.deepEqual(dataOf(byId.get(11)!, 'A'), ['192.0.2.1'])
      assert.deepEqual(dataOf(byId.get(22)!, 'A'), ['192.0.2.1'])
      assert.equal(rcodeOf(byId.get(33)!), 'NXDOMAIN')
    })

    test('names are matched case-insensitively and the question is echoed as asked', async () => {
      const r = await queryUdp(port, 'WwW.ExAmPlE.nL', 'A')
      assert.equal(r.questions![0]!.name, 'WwW.ExAmPlE.nL')
      assert.deepEqual(dataOf(r, 'A'), ['192.0.2.1'])
    })

    test('malformed and unsupported messages', async () => {
      const garbage = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x65])
      const r = await queryUdp(port, '', 'A', { raw: garbage })
      assert.equal(r.id, 0x1234)
      assert.equal(rcodeOf(r), 'FORMERR')
      await assert.rejects(queryUdp(port, Z, 'A', { raw: Buffer.from([1, 2, 3]), timeoutMs: 300 }), /no UDP answer/)
      assert.equal(rcodeOf(await queryUdp(port, Z, 'A', { qclass: 'CH' })), 'REFUSED')
      assert.equal(rcodeOf(await queryTcp(port, Z, 'AXFR')), 'REFUSED')
    })

    test('a change written to the tables is answered without publish()', async () => {
      await addRecords(t.ctx.db, domainId, [
        { type: 'TXT', name: `_acme-challenge.${Z}`, value: 'direct-write', ttl: 120 },
      ])
      await bumpSerial(t.ctx.db, domainId)
      await eventually(
        async () => txtOf(await queryUdp(port, `_acme-challenge.${Z}`, 'TXT')).includes('direct-write'),
        { what: 'the direct write is served' },
      )
    })

    test('publish() makes a change visible at once', async () => {
      await queryUdp(port, `published.${Z}`, 'A')
      await addRecords(t.ctx.db, domainId, [{ type: 'A', name: `published.${Z}`, value: '192.0.2.77' }])
      await bumpSerial(t.ctx.db, domainId)
      await t.ctx.drivers.dns.publish({ domain: Z, kind: 'records', names: [`published.${Z}`] })
      assert.deepEqual(dataOf(await queryUdp(port, `published.${Z}`, 'A'), 'A'), ['192.0.2.77'])
    })

    test('a second instance on the same database answers a change', async () => {
      const second = openDatabase(t.config.database)
      const silent = pino({ level: 'silent' })
      const other = new BuiltinDnsServer(
        zoneSourceOf(second.db, t.ctx.secrets.box),
        { host: '127.0.0.1', port: 0 },
        silent,
      )
      await other.start()
      try {
        const otherPort = other.address()!.port
        assert.deepEqual(dataOf(await queryUdp(otherPort, Z, 'A'), 'A'), ['192.0.2.1'])
        await addRecords(t.ctx.db, domainId, [{ type: 'A', name: `second.${Z}`, value: '192.0.2.88' }])
        await bumpSerial(t.ctx.db, domainId)
        await t.ctx.drivers.dns.publish({ domain: Z, kind: 'records', names: [`second.${Z}`] })
        await eventually(
          async () => dataOf(await queryUdp(otherPort, `second.${Z}`, 'A'), 'A').includes('192.0.2.88'),
          { what: 'the second instance serves the change' },
        )
        const newZone = 'newzone.nl'
        await queryUdp(otherPort, newZone, 'A')
        await insertZone(t.ctx.db, accountId, newZone, { records: [{ type: 'A', name: newZone, value: '192.0.2.89' }] })
        await eventually(async () => dataOf(await queryUdp(otherPort, newZone, 'A'), 'A').includes('192.0.2.89'), {
          what: 'the second instance serves the new zone',
        })
        await t.ctx.db.updateTable('domains').set({ status: 'cancelled' }).where('name', '=', newZone).execute()
        await eventually(async () => rcodeOf(await queryUdp(otherPort, newZone, 'A')) === 'REFUSED', {
          what: 'the cancelled zone is refused',
        })
      } finally {
        await other.stop()
        await second.close()
      }
    })
  })
})
