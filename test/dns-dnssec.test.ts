import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { execFile } from 'node:child_process'
import type { Answer, Packet } from 'dns-packet'
import { forEachDialect, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { freePort, insertZone, queryUdp } from './helpers/dns.js'
import { generateZoneKey } from '../src/lib/dns/dnssec.js'

const Z = 'signed.nl'
const SHA256 = 'ab'.repeat(32)
const DELV = '/usr/bin/delv'

const records = [
  { type: 'A', name: Z, value: '192.0.2.1', ttl: 300 },
  { type: 'MX', name: Z, value: '10 Mail.Signed.NL.' },
  { type: 'TXT', name: Z, value: 'v=spf1 -all' },
  { type: 'A', name: `mail.${Z}`, value: '192.0.2.25' },
  { type: 'CNAME', name: `www.${Z}`, value: `${Z}.` },
  { type: 'A', name: `*.wild.${Z}`, value: '192.0.2.50' },
  { type: 'A', name: `a.b.c.${Z}`, value: '192.0.2.99' },
  { type: 'SRV', name: `_sip._tcp.${Z}`, value: `10 60 5060 sip.${Z}.` },
  { type: 'NS', name: `sub.${Z}`, value: `ns1.sub.${Z}.` },
  { type: 'A', name: `ns1.sub.${Z}`, value: '192.0.2.53' },
  { type: 'NS', name: `sec.${Z}`, value: `ns1.sec.${Z}.` },
  { type: 'DS', name: `sec.${Z}`, value: `12345 13 2 ${SHA256}` },
]

/** Runs delv against the built-in server with the zone's trust anchor; resolves with its output (stdout + stderr). */
function delv(port: number, anchors: string, name: string, type: string): Promise<string> {
  return new Promise((resolve) => {
    const args = ['@127.0.0.1', '-p', String(port), '-a', anchors, `+root=${Z}.`, name, type]
    execFile(DELV, args, { timeout: 20_000 }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`))
  })
}

const section = (p: Packet, key: 'answers' | 'authorities') => (p[key] ?? []) as (Answer & { data: unknown })[]

forEachDialect((dialect) => {
  describe(`DNSSEC on the built-in DNS server (${dialect})`, {
    skip: !fs.existsSync(DELV) && 'delv not installed',
  }, () => {
    let t: TestApp
    let a: TestAccount
    let port: number
    let anchors: string
    let pubKey: string

    before(async () => {
      port = await freePort()
      t = await startTestApp(dialect, { env: { HOSTAPI_DNS_PORT: String(port), HOSTAPI_LOG_LEVEL: 'error' } })
      a = await t.account()
      await insertZone(t.ctx.db, a.accountId, Z, {
        serial: 2026112401,
        nameservers: [
          { hostname: 'ns1.hostapi.test', ipv4: '', ipv6: '' },
          { hostname: 'ns2.hostapi.test', ipv4: '', ipv6: '' },
        ],
        records,
      })
      anchors = path.join(tempDir(), 'anchors.conf')
    })
    after(async () => {
      await t?.close()
    })

    test('turning DNSSEC on makes a P-256 key, shows its DNSKEY and hands the DS to the registry', async () => {
      const on = await t.request('PUT', `/domains/${Z}`, { key: a.key, body: { dnssec: { enabled: true } } })
      assert.equal(on.status, 200)
      assert.equal(on.body.data.dnssec_enabled, 1)
      const keys = on.body.data.dnssec_keys as { alg: number; flags: number; pubKey: string }[]
      assert.equal(keys.length, 1)
      assert.deepEqual([keys[0]!.alg, keys[0]!.flags], [13, 257])
      pubKey = keys[0]!.pubKey
      assert.equal(Buffer.from(pubKey, 'base64').length, 64)
      const again = await t.request('PUT', `/domains/${Z}`, { key: a.key, body: { dnssec: { enabled: true } } })
      assert.deepEqual(again.body.data.dnssec_keys, keys, 'turning it on again keeps the key')

      const stored = await t.ctx.db.selectFrom('dnssec_zone_keys').selectAll().execute()
      assert.equal(stored.length, 1)
      assert.match(stored[0]!.private_key, /^v1:/, 'the private key is sealed')
      assert.ok(!stored[0]!.private_key.includes('PRIVATE KEY'))

      const parent = await t.ctx.drivers.registry.dnssec(Z)
      assert.equal(parent.length, 1)
      assert.deepEqual([parent[0]!.flags, parent[0]!.algorithm, parent[0]!.publicKey], [257, 13, pubKey])
      assert.equal(parent[0]!.digestType, 2)
      assert.match(parent[0]!.digest, /^[0-9a-f]{64}$/)

      const dnskey = await queryUdp(port, Z, 'DNSKEY', { dnssec: true })
      const served = section(dnskey, 'answers').find((r) => r.type === 'DNSKEY')!.data as { key: Buffer }
      assert.equal(served.key.toString('base64'), pubKey)
      assert.ok(section(dnskey, 'answers').some((r) => r.type === 'RRSIG'))
      fs.writeFileSync(anchors, `trust-anchors {\n  "${Z}." static-key 257 3 13 "${pubKey}";\n};\n`)
    })

    test('without the DO bit answers carry no DNSSEC records', async () => {
      const plain = await queryUdp(port, Z, 'A')
      assert.deepEqual(
        section(plain, 'answers').map((r) => r.type),
        ['A'],
      )
      const nx = await queryUdp(port, `nope.${Z}`, 'A')
      assert.deepEqual(
        section(nx, 'authorities').map((r) => r.type),
        ['SOA'],
      )
    })

    for (const [name, type] of [
      [Z, 'A'],
      [Z, 'MX'],
      [Z, 'TXT'],
      [Z, 'NS'],
      [Z, 'SOA'],
      [Z, 'DNSKEY'],
      [`www.${Z}`, 'A'],
      [`x.wild.${Z}`, 'A'],
      [`_sip._tcp.${Z}`, 'SRV'],
      [`sec.${Z}`, 'DS'],
    ] as const) {
      test(`${type} ${name}: fully validated by delv`, async () => {
        const out = await delv(port, anchors, name, type)
        assert.match(out, /; fully validated/, out)
      })
    }

    for (const [name, type, what] of [
      [Z, 'AAAA', 'NODATA at the apex'],
      [`mail.${Z}`, 'TXT', 'NODATA at a name'],
      [`c.${Z}`, 'A', 'NODATA at an empty non-terminal'],
      [`x.wild.${Z}`, 'TXT', 'NODATA at a wildcard'],
      [`sub.${Z}`, 'DS', 'no DS at an insecure delegation'],
      [`nope.${Z}`, 'A', 'NXDOMAIN'],
      [`deep.er.${Z}`, 'TXT', 'NXDOMAIN two labels down'],
      [`x.mail.${Z}`, 'A', 'NXDOMAIN below a name'],
      [`zzz.${Z}`, 'A', 'NXDOMAIN after every name'],
      [`0.${Z}`, 'A', 'NXDOMAIN before every name'],
    ] as const) {
      test(`${type} ${name} (${what}): negative response, fully validated by delv`, async () => {
        const out = await delv(port, anchors, name, type)
        assert.match(out, /; negative response, fully validated/, out)
        if (what.startsWith('NXDOMAIN')) assert.match(out, /NXDOMAIN|does not exist/i, out)
      })
    }

    test('with another key as trust anchor delv does not validate (the checks above are not vacuous)', async () => {
      const other = path.join(path.dirname(anchors), 'other.conf')
      const wrong = generateZoneKey().publicKey.toString('base64')
      fs.writeFileSync(other, `trust-anchors {\n  "${Z}." static-key 257 3 13 "${wrong}";\n};\n`)
      for (const [name, type] of [
        [Z, 'A'],
        [`nope.${Z}`, 'A'],
      ]) {
        const out = await delv(port, other, name!, type!)
        assert.doesNotMatch(out, /fully validated/, out)
      }
    })

    test('a denial carries NSECs that cover the name and no existing one', async () => {
      const nx = await queryUdp(port, `nope.${Z}`, 'A', { dnssec: true })
      const nsecs = section(nx, 'authorities').filter((r) => r.type === 'NSEC')
      assert.deepEqual(
        nsecs.map((r) => r.name),
        [`nopd~.${Z}`, `)~.${Z}`],
      )
      assert.equal((nx as unknown as { rcode: string }).rcode, 'NXDOMAIN')
    })

    test('turning DNSSEC off removes the key, stops signing and clears the parent', async () => {
      const off = await t.request('PUT', `/domains/${Z}`, { key: a.key, body: { dnssec: { enabled: false } } })
      assert.equal(off.body.data.dnssec_enabled, 0)
      assert.deepEqual(off.body.data.dnssec_keys, [])
      assert.equal((await t.ctx.db.selectFrom('dnssec_zone_keys').selectAll().execute()).length, 0)
      assert.deepEqual(await t.ctx.drivers.registry.dnssec(Z), [])
      const dnskey = await queryUdp(port, Z, 'DNSKEY', { dnssec: true })
      assert.deepEqual(section(dnskey, 'answers'), [])
      const signed = await queryUdp(port, Z, 'A', { dnssec: true })
      assert.deepEqual(
        section(signed, 'answers').map((r) => r.type),
        ['A'],
      )
    })
  })
})
