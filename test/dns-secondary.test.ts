import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import dgram from 'node:dgram'
import { randomBytes } from 'node:crypto'
import dnsPacket from 'dns-packet'
import pino from 'pino'
import { startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain, uniqueName } from './helpers/fixtures/domains.js'
import { dig, freePort, insertZone, queryTcp, queryUdp } from './helpers/dns.js'
import { consistently, eventually } from './helpers/wait.js'
import { describeWithKnot, startKnot, type Knot } from './helpers/knot.js'
import { type ConfigError, loadConfig } from '../src/config/config.js'
import { ZoneNotifier } from '../src/drivers/dns/notify.js'
import { TSIG_ERROR, findTsig, signTsig, verifyTsig } from '../src/lib/dns/tsig.js'

const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env)
    return []
  } catch (err) {
    return (err as ConfigError).problems
  }
}

describe('zone transfer settings (HOSTAPI_DNS_SECONDARIES, HOSTAPI_DNS_TSIG_KEY, HOSTAPI_DNS_NOTIFY_PORT)', () => {
  it('reads addresses, ranges and address:port entries; ranges are allowed to transfer but not notified', () => {
    const c = loadConfig({
      HOSTAPI_DNS_SECONDARIES:
        '192.0.2.1, 198.51.100.0/24,127.0.0.1:5353,2001:db8::1,[2001:db8::2]:5300,2001:db8:1::/48',
      HOSTAPI_DNS_NOTIFY_PORT: '1053',
      HOSTAPI_DNS_TSIG_KEY: 'Transfer.Key.:c2VjcmV0',
    })
    assert.deepEqual(c.dnsTransfer, {
      secondaries: [
        { address: '192.0.2.1', prefixLength: 32, notifyPort: 1053 },
        { address: '198.51.100.0', prefixLength: 24, notifyPort: null },
        { address: '127.0.0.1', prefixLength: 32, notifyPort: 5353 },
        { address: '2001:db8::1', prefixLength: 128, notifyPort: 1053 },
        { address: '2001:db8::2', prefixLength: 128, notifyPort: 5300 },
        { address: '2001:db8:1::', prefixLength: 48, notifyPort: null },
      ],
      tsigKey: { name: 'transfer.key', secret: 'c2VjcmV0' },
      catalogZone: 'catalog.hostapi.invalid',
    })
    assert.deepEqual(loadConfig({}).dnsTransfer, {
      secondaries: [],
      tsigKey: null,
      catalogZone: 'catalog.hostapi.invalid',
    })
    assert.equal(loadConfig({ HOSTAPI_DNS_CATALOG_ZONE: '' }).dnsTransfer.catalogZone, null)
    assert.equal(
      loadConfig({ HOSTAPI_DNS_CATALOG_ZONE: 'Catalog.Example.NET.' }).dnsTransfer.catalogZone,
      'catalog.example.net',
    )
  })

  it('lists every problem', () => {
    assert.deepEqual(
      problems({
        HOSTAPI_DNS_SECONDARIES: 'ns1.example.net,192.0.2.1:0,10.0.0.0/33,127.1',
        HOSTAPI_DNS_NOTIFY_PORT: '70000',
        HOSTAPI_DNS_TSIG_KEY: 'secret-without-name',
        HOSTAPI_DNS_CATALOG_ZONE: 'catalog',
      }),
      [
        'HOSTAPI_DNS_NOTIFY_PORT must be a port from 1 to 65535 (got "70000")',
        'HOSTAPI_DNS_SECONDARIES: "ns1.example.net" is not an IP address, CIDR range or address:port',
        'HOSTAPI_DNS_SECONDARIES: "192.0.2.1:0" must be a port from 1 to 65535 (got "0")',
        'HOSTAPI_DNS_SECONDARIES: "10.0.0.0/33" is not an IP address, CIDR range or address:port',
        'HOSTAPI_DNS_SECONDARIES: "127.1" is not an IP address, CIDR range or address:port',
        'HOSTAPI_DNS_TSIG_KEY must be name:base64secret (hmac-sha256), e.g. transfer.key:c2VjcmV0',
        'HOSTAPI_DNS_CATALOG_ZONE must be a domain name of two labels or more (got "catalog")',
      ],
    )
    assert.deepEqual(problems({ HOSTAPI_DNS_TSIG_KEY: 'k:c2VjcmV0' }), [
      'HOSTAPI_DNS_TSIG_KEY is set but HOSTAPI_DNS_SECONDARIES is empty',
    ])
    assert.deepEqual(
      problems({
        HOSTAPI_DNS_SECONDARIES: '192.0.2.1',
        HOSTAPI_DNS_DRIVER: 'powerdns',
        HOSTAPI_POWERDNS_URL: 'http://127.0.0.1:8081',
        HOSTAPI_POWERDNS_API_KEY: 'k',
      }),
      ['HOSTAPI_DNS_SECONDARIES applies to the built-in DNS server only (HOSTAPI_DNS_DRIVER=builtin)'],
    )
  })
})

describe('NOTIFY to a secondary (RFC 1996)', () => {
  const key = { name: 'transfer.key', secret: randomBytes(32) }
  const soa = {
    name: 'example.nl',
    type: 'SOA' as const,
    ttl: 3600,
    data: {
      mname: 'ns1.hostapi.test',
      rname: 'hostmaster.example.nl',
      serial: 2026112405,
      refresh: 1,
      retry: 1,
      expire: 1,
      minimum: 1,
    },
  }

  it('is signed, carries the serial, and is retried until answered', async () => {
    const secondary = dgram.createSocket('udp4')
    await new Promise<void>((r) => secondary.bind(0, '127.0.0.1', () => r()))
    const seen: Buffer[] = []
    secondary.on('message', (msg, rinfo) => {
      seen.push(msg)
      // The first two are "lost".
      if (seen.length < 3) return
      const q = dnsPacket.decode(msg)
      const flags = (4 << 11) | dnsPacket.AUTHORITATIVE_ANSWER
      const answer = dnsPacket.encode({ id: q.id, type: 'response', flags, questions: q.questions })
      secondary.send(answer, rinfo.port, rinfo.address)
    })
    const lines: string[] = []
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) })
    const target = { host: '127.0.0.1', port: secondary.address().port }
    const notifier = new ZoneNotifier([target], key, log, [50, 100, 200, 400])
    try {
      notifier.notify('example.nl', soa)
      await eventually(async () => lines.some((l) => l.includes('DNS NOTIFY answer not signed correctly')), {
        what: 'the unsigned answer is logged',
        timeoutMs: 3000,
      })
      assert.equal(seen.length, 3)
      for (const msg of seen) {
        const q = dnsPacket.decode(msg)
        assert.equal((msg.readUInt16BE(2) >> 11) & 0xf, 4, 'opcode NOTIFY')
        assert.equal(q.questions?.[0]?.name, 'example.nl')
        assert.equal((q.answers?.[0] as { data: { serial: number } } | undefined)?.data.serial, 2026112405)
        assert.equal(verifyTsig(msg, key, { now: Math.floor(Date.now() / 1000) }).status, 'ok')
      }
      // The answer was not signed: taken as an answer (no more attempts), with a warning.
      await consistently(() => assert.equal(seen.length, 3), { what: 'no further NOTIFY', forMs: 500 })
    } finally {
      notifier.stop()
      secondary.close()
    }
  })

  it('asks a secondary that acknowledged for the SOA, and notifies it again until it serves the serial', async () => {
    // A secondary that acknowledges every NOTIFY but drops the first (still serving the older serial), as one busy
    // with a refresh may: it serves the new serial only after the second NOTIFY.
    const secondary = dgram.createSocket('udp4')
    await new Promise<void>((r) => secondary.bind(0, '127.0.0.1', () => r()))
    let served = soa.data.serial - 1
    let notifies = 0
    let soaQueries = 0
    secondary.on('message', (msg, rinfo) => {
      const q = dnsPacket.decode(msg)
      if (((msg.readUInt16BE(2) >> 11) & 0xf) === 4) {
        notifies++
        if (notifies === 2) served = soa.data.serial
        const flags = (4 << 11) | dnsPacket.AUTHORITATIVE_ANSWER
        secondary.send(
          dnsPacket.encode({ id: q.id, type: 'response', flags, questions: q.questions }),
          rinfo.port,
          rinfo.address,
        )
        return
      }
      soaQueries++
      const answers = [{ ...soa, data: { ...soa.data, serial: served } }]
      secondary.send(
        dnsPacket.encode({ id: q.id, type: 'response', questions: q.questions, answers }),
        rinfo.port,
        rinfo.address,
      )
    })
    const lines: string[] = []
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) })
    const notifier = new ZoneNotifier([{ host: '127.0.0.1', port: secondary.address().port }], null, log, [200])
    try {
      notifier.notify('example.nl', soa)
      await eventually(async () => lines.some((l) => l.includes('DNS secondary serves the notified serial')), {
        what: 'the secondary serves the notified serial',
        timeoutMs: 10_000,
      })
      assert.equal(notifies, 2, 'notified again once, after the first SOA showed the older serial')
      assert.equal(soaQueries, 2)
      assert.equal(lines.filter((l) => l.includes('DNS NOTIFY sent again')).length, 1)
    } finally {
      notifier.stop()
      secondary.close()
    }
  })

  it('gives up after the last attempt, and stop() abandons a NOTIFY being retried', async () => {
    const silent = dgram.createSocket('udp4')
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', () => r()))
    let received = 0
    silent.on('message', () => received++)
    const lines: string[] = []
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) })
    const target = [{ host: '127.0.0.1', port: silent.address().port }]
    try {
      new ZoneNotifier(target, null, log, [30, 30]).notify('example.nl', soa)
      await eventually(async () => lines.some((l) => l.includes('DNS NOTIFY not answered')), {
        what: 'the unanswered NOTIFY is logged',
        timeoutMs: 2000,
      })
      assert.equal(received, 2)
      const stopped = new ZoneNotifier(target, null, log, [10_000])
      stopped.notify('example.nl', soa)
      await eventually(async () => received === 3, { what: 'the third NOTIFY arrives', timeoutMs: 2000 })
      stopped.stop()
      await consistently(() => assert.equal(lines.filter((l) => l.includes('DNS NOTIFY not answered')).length, 1), {
        what: 'the stopped notifier logs nothing',
        forMs: 50,
      })
    } finally {
      silent.close()
    }
  })
})

describeWithKnot('the built-in DNS server as hidden primary of a Knot secondary (AXFR, IXFR, NOTIFY, TSIG)', () => {
  const tsig = { name: 'hostapi-transfer.key', secret: randomBytes(32).toString('base64') }
  const y = `hmac-sha256:${tsig.name}:${tsig.secret}`
  let t: TestApp
  let a: TestAccount
  let knot: Knot
  let port: number
  let d: string
  const big = uniqueName('big')
  const BIG_RECORDS = 2500

  before(async () => {
    port = await freePort()
    let knotPort = await freePort()
    while (knotPort === port) knotPort = await freePort()
    t = await startTestApp('sqlite', {
      env: {
        HOSTAPI_DNS_PORT: String(port),
        HOSTAPI_DNS_SECONDARIES: `127.0.0.1:${knotPort}`,
        HOSTAPI_DNS_TSIG_KEY: `${tsig.name}:${tsig.secret}`,
      },
    })
    a = await t.account('Hidden primary')
    d = await makeDomain(t, a)
    await patch({ type: 'A', name: 'www', value: '192.0.2.1' })
    // Large enough to need several transfer messages of at most 64 KiB.
    const records = Array.from({ length: BIG_RECORDS }, (_, i) => ({
      type: 'TXT',
      name: `r${i}.${big}`,
      value: `${'x'.repeat(40)} ${i}`,
    }))
    await insertZone(t.ctx.db, a.accountId, big, { serial: 2026112401, records })
    knot = await startKnot({ port: knotPort, zones: [d, big], primaryPort: port, tsig })
  })
  after(async () => {
    await knot?.close()
    await t?.close()
  })

  const patch = (record: unknown) => t.request('PATCH', `/domains/${d}/dns`, { key: a.key, body: { record } })
  const soaSerial = async (zone: string, at: number) => {
    const r = await queryUdp(at, zone, 'SOA', { timeoutMs: 500 }).catch(() => null)
    const soa = r?.answers?.find((x) => x.type === 'SOA') as { data: { serial: number } } | undefined
    return soa?.data.serial ?? null
  }

  it('the secondary serves the zones after the first transfer (a large zone in several signed messages)', async () => {
    const ours = await soaSerial(d, port)
    assert.ok(ours)
    await eventually(async () => (await soaSerial(d, knot.port)) === ours, {
      what: 'the secondary serves our serial',
      timeoutMs: 10_000,
    }).catch((err) => {
      throw new Error(`${err}\n${knot.output()}`)
    })
    await eventually(async () => (await soaSerial(big, knot.port)) === 2026112401, {
      what: 'the secondary serves the large zone',
      timeoutMs: 10_000,
    })
    assert.match(await dig(knot.port, '+short', 'A', `www.${d}`), /^192\.0\.2\.1$/m)
    const last = await dig(knot.port, '+short', 'TXT', `r${BIG_RECORDS - 1}.${big}`)
    assert.match(last, new RegExp(`${BIG_RECORDS - 1}"$`, 'm'))
  })

  it('a PATCH through the API is answered by the secondary (NOTIFY, then a transfer)', async (ctx) => {
    await eventually(async () => (await soaSerial(d, knot.port)) === (await soaSerial(d, port)), {
      what: 'the secondary serves our serial',
      timeoutMs: 10_000,
    })
    const sent = Date.now()
    const patched = await patch({ type: 'A', name: 'fresh', value: '192.0.2.77' })
    assert.equal(patched.status, 200, patched.text)
    const answered = Date.now()
    // The zone's SOA refresh is hours: only the NOTIFY can make the secondary fetch the change in time.
    await eventually(
      async () => {
        const r = await queryUdp(knot.port, `fresh.${d}`, 'A', { timeoutMs: 500 }).catch(() => null)
        return (r?.answers ?? []).some((x) => x.type === 'A' && x.data === '192.0.2.77')
      },
      { what: 'the secondary answers the new record', timeoutMs: 30_000 },
    )
    const ms = Date.now() - sent
    const api = answered - sent
    ctx.diagnostic(`a PATCH sent is answered by the secondary after ${ms} ms (the API answered in ${api} ms)`)
  })

  it('AXFR signed with the key from a listed address: every message verified by dig', async () => {
    const out = await dig(port, '-y', y, 'AXFR', big)
    assert.doesNotMatch(out, /Transfer failed|failure|Couldn't verify/i)
    const m = /XFR size: (\d+) records \(messages (\d+)/.exec(out)
    assert.ok(m, out.slice(-500))
    assert.equal(Number(m[1]), BIG_RECORDS + 2 + 2, 'SOA, the two NS, the records, SOA')
    assert.ok(Number(m[2]) >= 2, 'several messages')
    const small = await dig(port, '-y', y, 'AXFR', d)
    assert.match(small, new RegExp(`www\\.${d.replace('.', '\\.')}\\.\\s+\\d+\\s+IN\\s+A\\s+192\\.0\\.2\\.1`))
  })

  it('IXFR from a current serial is the SOA alone; from an older one, the whole zone', async () => {
    const serial = (await soaSerial(d, port))!
    const current = await dig(port, '-y', y, `IXFR=${serial}`, d)
    assert.match(current, /XFR size: 1 records/)
    const older = await dig(port, '-y', y, `IXFR=${serial - 1}`, d)
    assert.match(older, /www\..*IN\s+A\s+192\.0\.2\.1/)
  })

  it('a transfer without the key, with a wrong key, over UDP or from an unlisted address is refused', async () => {
    assert.match(await dig(port, 'AXFR', d), /Transfer failed/)
    const wrong = await dig(port, '-y', `hmac-sha256:${tsig.name}:${randomBytes(32).toString('base64')}`, 'AXFR', d)
    assert.doesNotMatch(wrong, /IN\s+SOA/)
    const otherName = await dig(port, '-y', `hmac-sha256:other.key:${tsig.secret}`, 'AXFR', d)
    assert.doesNotMatch(otherName, /IN\s+SOA/)
    assert.match(await dig(port, '-b', '127.0.0.2', '-y', y, 'AXFR', d), /Transfer failed/)
    assert.match(await dig(port, '-y', y, 'AXFR', uniqueName('nothere')), /Transfer failed/)
    const udp = await queryUdp(port, d, 'AXFR')
    assert.equal((udp as { rcode?: string }).rcode, 'REFUSED')
  })

  it('answers a bad TSIG with NOTAUTH and the TSIG error: BADSIG and BADKEY unsigned, BADTIME signed', async () => {
    const key = { name: tsig.name, secret: Buffer.from(tsig.secret, 'base64') }
    const request = (signWith: typeof key, now: number) => {
      const q = dnsPacket.encode({ id: 4711, type: 'query', questions: [{ name: d, type: 'AXFR', class: 'IN' }] })
      return signTsig(q, signWith, { now })
    }
    const now = Math.floor(Date.now() / 1000)
    const send = async (raw: Buffer) => {
      const r = await queryTcp(port, d, 'AXFR', { raw })
      const found = findTsig(r.raw)
      assert.ok(found && found !== 'malformed')
      return { rcode: r.raw.readUInt16BE(2) & 0xf, tsig: found.record, raw: r.raw }
    }
    const badSig = await send(request({ ...key, secret: randomBytes(32) }, now).message)
    assert.deepEqual([badSig.rcode, badSig.tsig.error, badSig.tsig.mac.length], [9, TSIG_ERROR.BADSIG, 0])
    const badKey = await send(request({ ...key, name: 'unknown.key' }, now).message)
    assert.deepEqual([badKey.rcode, badKey.tsig.error, badKey.tsig.mac.length], [9, TSIG_ERROR.BADKEY, 0])
    const late = request(key, now - 3600)
    const badTime = await send(late.message)
    assert.deepEqual([badTime.rcode, badTime.tsig.error, badTime.tsig.timeSigned], [9, TSIG_ERROR.BADTIME, now - 3600])
    assert.ok(Math.abs(badTime.tsig.otherData.readUIntBE(0, 6) - now) < 60, 'the server time in Other Data')
    const verified = verifyTsig(badTime.raw, key, { now: now - 3600, requestMac: late.mac })
    assert.equal(verified.status, 'ok')
    // A query signed with the key is answered signed (as Knot's SOA queries are).
    const soa = await dig(port, '-y', y, 'SOA', d)
    assert.match(soa, /status: NOERROR/)
    assert.doesNotMatch(soa, /Couldn't verify|failure/i)
    assert.match(soa, /TSIG\s+hmac-sha256/)
  })
})
