// The PowerDNS driver in the app (committed changes, DNSSEC, changes queued while PowerDNS is down) and without
// PowerDNS; the DNS driver's configuration.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { Packet } from 'dns-packet'
import pino from 'pino'
import { ConfigError, loadConfig } from '../src/config/config.js'
import { dnsDriverFor } from '../src/drivers.js'
import { BuiltinDnsServer } from '../src/drivers/dns/builtin.js'
import { PowerDnsDriver } from '../src/drivers/dns/powerdns.js'
import { ManualClock } from '../src/clock.js'
import { DNS_PUSH_JOB } from '../src/modules/domains/dns/zone-delivery.js'
import { runAdmin } from '../src/cli/admin.js'
import fs from 'node:fs'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { generateZoneKey } from '../src/lib/dns/dnssec.js'
import { startTestApp, tempDir } from './helpers/app.js'
import { dig, insertZone, queryUdp, txtOf } from './helpers/dns.js'
import { MemoryZones } from './helpers/memory-zones.js'
import { describeWithPowerDns, startPowerDns, type PowerDns } from './helpers/powerdns.js'

const silent = pino({ level: 'silent' })
const rcodeOf = (p: Packet) => (p as Packet & { rcode: string }).rcode
const dataOf = (p: Packet, type: string) =>
  (p.answers ?? []).filter((a) => a.type === type).map((a) => (a as unknown as { data: unknown }).data)
/** An RRset change as an operator would send it straight to PowerDNS. */
const replace = (name: string, type: string, content: string, ttl = 60) => ({
  name,
  type,
  ttl,
  changetype: 'REPLACE',
  records: [{ content, disabled: false }],
})

describeWithPowerDns('PowerDNS driver in the app (a real pdns_server)', () => {
  let pdns: PowerDns
  let zones: MemoryZones
  let driver: PowerDnsDriver
  const q = (name: string, type: string) => queryUdp(pdns.dnsPort, name, type)

  before(async () => {
    pdns = await startPowerDns()
    zones = new MemoryZones()
    driver = new PowerDnsDriver({ url: pdns.url, apiKey: pdns.apiKey, timeoutMs: 2000 }, zones, silent)
    await driver.start()
  })
  after(async () => {
    await driver?.stop()
    await pdns?.close()
  })

  it('is what the app pushes its committed DNS changes through when HOSTAPI_DNS_DRIVER is powerdns', async () => {
    const env = {
      HOSTAPI_DNS_DRIVER: 'powerdns',
      HOSTAPI_POWERDNS_URL: pdns.url,
      HOSTAPI_POWERDNS_API_KEY: pdns.apiKey,
    }
    const t = await startTestApp('sqlite', { env })
    try {
      const owner = await t.account()
      const z = 'through-the-api.nl'
      await insertZone(t.ctx.db, owner.accountId, z, { records: [{ type: 'A', name: z, value: '192.0.2.1' }] })
      const patched = await t.request('PATCH', `/api/v2/domains/${z}/dns`, {
        key: owner.key,
        body: { record: { type: 'TXT', name: '_acme-challenge', value: 'token', ttl: 120 } },
      })
      assert.equal(patched.status, 200, patched.text)
      assert.equal(await t.ctx.jobs.drain(), 1)
      assert.deepEqual(txtOf(await q(`_acme-challenge.${z}`, 'TXT')), ['token'])
      assert.deepEqual(dataOf(await q(z, 'A'), 'A'), ['192.0.2.1'])
      const put = await t.request('PUT', `/api/v2/domains/${z}/dns`, {
        key: owner.key,
        body: { records: [{ type: 'A', name: 'www', value: '192.0.2.2', ttl: 3600 }] },
      })
      assert.equal(put.status, 200, put.text)
      await t.ctx.jobs.drain()
      assert.deepEqual(dataOf(await q(`www.${z}`, 'A'), 'A'), ['192.0.2.2'])
      assert.equal(rcodeOf(await q(`_acme-challenge.${z}`, 'TXT')), 'NXDOMAIN')
    } finally {
      await t.close()
    }
  })

  it("signs a zone with DNSSEC on with hostapi's key alone; resync removes a key added behind its back", async () => {
    const z = 'signed-by-pdns.nl'
    const id = zones.add(z, { records: [{ type: 'A', name: z, value: '192.0.2.1' }] })
    await driver.publish({ domain: z, kind: 'zone' })
    const generated = generateZoneKey()
    zones.setDnssec(id, { privateKeyPem: generated.privateKeyPem, flags: 257, algorithm: 13 })
    await driver.publish({ domain: z, kind: 'zone' })
    const keys = async () =>
      ((await pdns.api('GET', `/zones/${z}./cryptokeys`)).body as { dnskey: string; active: boolean }[]).map(
        (k) => `${k.active ? '' : '!'}${k.dnskey}`,
      )
    const ours = `257 3 13 ${generated.publicKey.toString('base64')}`
    assert.deepEqual(await keys(), [ours])
    const signed = await queryUdp(pdns.dnsPort, z, 'A', { dnssec: true })
    assert.ok(
      (signed.answers ?? []).some((a) => a.type === 'RRSIG'),
      'PowerDNS signs',
    )
    const added = await pdns.api('POST', `/zones/${z}./cryptokeys`, {
      keytype: 'zsk',
      active: true,
      algorithm: 'ECDSAP256SHA256',
    })
    assert.equal(added.status, 201)
    assert.equal((await keys()).length, 2)
    const drift = await driver.resync([z])
    assert.deepEqual(drift, [{ zone: z, missing: false, extra: false, differing: [`${z}. DNSKEY`] }])
    assert.deepEqual(await keys(), [ours])
    assert.deepEqual(await driver.resync([z]), [], 'no drift left')

    zones.setDnssec(id, null)
    await driver.publish({ domain: z, kind: 'zone' })
    assert.deepEqual(await keys(), [])
    const unsigned = await queryUdp(pdns.dnsPort, z, 'A', { dnssec: true })
    assert.deepEqual(
      (unsigned.answers ?? []).map((a) => a.type),
      ['A'],
    )
  })

  it('signs a domain whose DNSSEC is turned on through the API; delv validates; off removes the key', async () => {
    const env = {
      HOSTAPI_DNS_DRIVER: 'powerdns',
      HOSTAPI_POWERDNS_URL: pdns.url,
      HOSTAPI_POWERDNS_API_KEY: pdns.apiKey,
    }
    const t = await startTestApp('sqlite', { env })
    try {
      const owner = await t.account()
      const z = 'secured-through-the-api.nl'
      const nameservers = ['ns1.hostapi.test', 'ns2.hostapi.test'].map((hostname) => ({ hostname, ipv4: '', ipv6: '' }))
      await insertZone(t.ctx.db, owner.accountId, z, { nameservers })
      await t.request('PUT', `/api/v2/domains/${z}/dns`, {
        key: owner.key,
        body: {
          records: [
            { type: 'A', name: '@', value: '192.0.2.1', ttl: 3600 },
            { type: 'A', name: 'www', value: '192.0.2.2', ttl: 3600 },
          ],
        },
      })
      await t.ctx.jobs.drain()
      const on = await t.request('PUT', `/api/v2/domains/${z}`, { key: owner.key, body: { dnssec: { enabled: true } } })
      assert.equal(on.status, 200, on.text)
      const [key] = on.body.data.dnssec_keys as { alg: number; flags: number; pubKey: string }[]
      assert.deepEqual([key!.alg, key!.flags], [13, 257])
      await t.ctx.jobs.drain()

      const dnskey = await queryUdp(pdns.dnsPort, z, 'DNSKEY', { dnssec: true })
      const served = (dnskey.answers ?? []).filter((a) => a.type === 'DNSKEY')
      assert.deepEqual(
        served.map((a) => (a as unknown as { data: { flags: number; key: Buffer } }).data.key.toString('base64')),
        [key!.pubKey],
        'PowerDNS publishes the key the domain shows',
      )
      assert.ok((dnskey.answers ?? []).some((a) => a.type === 'RRSIG'))
      const text = await dig(pdns.dnsPort, '+dnssec', 'DNSKEY', z)
      assert.match(text, /RRSIG\s+DNSKEY 13 2 /)
      const parent = await t.ctx.drivers.registry.dnssec(z)
      assert.deepEqual([parent[0]!.publicKey, parent[0]!.digestType], [key!.pubKey, 2])

      if (fs.existsSync('/usr/bin/delv')) {
        const anchors = path.join(tempDir(), 'anchors.conf')
        fs.writeFileSync(anchors, `trust-anchors {\n  "${z}." static-key 257 3 13 "${key!.pubKey}";\n};\n`)
        const delv = (name: string, type: string) =>
          new Promise<string>((resolve) => {
            const args = ['@127.0.0.1', '-p', String(pdns.dnsPort), '-a', anchors, `+root=${z}.`, name, type]
            execFile('/usr/bin/delv', args, { timeout: 20_000 }, (_e, out, err) => resolve(`${out}${err}`))
          })
        assert.match(await delv(`www.${z}`, 'A'), /; fully validated/)
        assert.match(await delv(`nope.${z}`, 'A'), /; negative response, fully validated/)
      }

      const off = await t.request('PUT', `/api/v2/domains/${z}`, {
        key: owner.key,
        body: { dnssec: { enabled: false } },
      })
      assert.equal(off.body.data.dnssec_enabled, 0)
      await t.ctx.jobs.drain()
      assert.deepEqual(((await pdns.api('GET', `/zones/${z}./cryptokeys`)).body as unknown[]).length, 0)
      assert.deepEqual(await t.ctx.drivers.registry.dnssec(z), [])
    } finally {
      await t.close()
    }
  })

  it('keeps changes made while PowerDNS is down in the job queue and pushes them once it is back', async () => {
    const env = {
      HOSTAPI_DNS_DRIVER: 'powerdns',
      HOSTAPI_POWERDNS_URL: pdns.url,
      HOSTAPI_POWERDNS_API_KEY: pdns.apiKey,
    }
    const clock = new ManualClock()
    const t = await startTestApp('sqlite', { env, clock })
    try {
      const owner = await t.account()
      const z = 'outage-queue.nl'
      await insertZone(t.ctx.db, owner.accountId, z, { records: [{ type: 'A', name: z, value: '192.0.2.1' }] })
      await t.ctx.services.zoneDelivery.resync([z])
      assert.deepEqual(dataOf(await q(z, 'A'), 'A'), ['192.0.2.1'])
      await pdns.stop()
      const patched = await t.request('PATCH', `/api/v2/domains/${z}/dns`, {
        key: owner.key,
        body: { record: { type: 'A', name: 'www', value: '192.0.2.9', ttl: 300 } },
      })
      // The answer does not wait for PowerDNS: the change is stored and its push queued (run by the drain).
      assert.equal(patched.status, 200, patched.text)
      assert.equal(await t.ctx.jobs.drain(), 1)
      const pushes = () =>
        t.ctx.db
          .selectFrom('jobs')
          .select(['status', 'attempts', 'last_error'])
          .where('kind', '=', DNS_PUSH_JOB)
          .execute()
      const [failed] = await pushes()
      assert.equal(failed.status, 'queued')
      assert.equal(failed.attempts, 1)
      assert.match(failed.last_error ?? '', /PowerDNS/)
      assert.doesNotMatch(failed.last_error ?? '', new RegExp(pdns.apiKey))
      // The lag is visible to the operator: a queued push and, once its retry is due (1 s), how long it has waited.
      clock.advance(2_500)
      const metrics = await t.ctx.ops.metrics.text()
      assert.match(metrics, /^hostapi_jobs\{kind="dns\.push",status="queued"\} 1$/m)
      const age = /^hostapi_jobs_oldest_age_seconds\{kind="dns\.push",status="queued"\} ([0-9.]+)$/m.exec(metrics)
      assert.ok(age && Number(age[1]) >= 1.5, metrics)
      await pdns.start()
      clock.advance(1_000)
      assert.equal(await t.ctx.jobs.drain(), 1)
      assert.deepEqual(
        (await pushes()).map((j) => j.status),
        ['done'],
      )
      assert.deepEqual(dataOf(await q(`www.${z}`, 'A'), 'A'), ['192.0.2.9'])

      // Drift made behind hostapi's back is reported and fixed by the admin command and the admin API.
      await pdns.api('PATCH', `/zones/${z}.`, { rrsets: [replace(`www.${z}.`, 'A', '203.0.113.1')] })
      const out: string[] = []
      const err: string[] = []
      const [outSink, errSink] = [out, err].map((lines) => ({ write: (text: string) => lines.push(text) }))
      assert.equal(await runAdmin(t.ctx, ['dns', 'resync', '--domain', z], outSink!, errSink!), 0)
      assert.deepEqual(out, [`${z}\tdiffering: www.${z}. A\n`])
      assert.deepEqual(err, ['resync: 1 zone(s) compared, 1 drifted and fixed, 0 failed\n'])
      assert.deepEqual(dataOf(await q(`www.${z}`, 'A'), 'A'), ['192.0.2.9'])
      // A zone that drifted in many record sets is one short line: the first ones named, the others counted.
      const added = Array.from({ length: 2000 }, (_, i) =>
        replace(`extra-${i}-${'x'.repeat(40)}.${z}.`, 'A', '203.0.113.7'),
      )
      await pdns.api('PATCH', `/zones/${z}.`, { rrsets: added })
      out.length = 0
      assert.equal(await runAdmin(t.ctx, ['dns', 'resync', '--domain', z], outSink!, errSink!), 0)
      assert.equal(out.length, 1)
      assert.match(out[0]!, new RegExp(`^${z.replace(/\./g, '\\.')}\tdiffering: (\\S+ A, ){9}\\S+ A and 1990 more\n$`))
      assert.ok(out[0]!.length < 1000, `${out[0]!.length} characters`)
      await pdns.api('PATCH', `/zones/${z}.`, { rrsets: [{ name: `${z}.`, type: 'A', changetype: 'DELETE' }] })
      const token = (await t.ctx.services.admin.createToken('dns')).token
      const resync = await t.request('POST', '/admin/v1/dns/resync', {
        headers: { authorization: `Bearer ${token}` },
        body: { domains: [z] },
      })
      assert.equal(resync.status, 200, resync.text)
      assert.deepEqual(resync.body.data.drift, [{ zone: z, missing: false, extra: false, differing: [`${z}. A`] }])
      assert.deepEqual(dataOf(await q(z, 'A'), 'A'), ['192.0.2.1'])
    } finally {
      await t.close()
    }
  })
})

describe('PowerDnsDriver without PowerDNS', () => {
  it('starts though the API does not answer; reports the configured DNS address only while started', async () => {
    const d = new PowerDnsDriver(
      { url: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 200, dnsAddress: { host: '127.0.0.1', port: 53 } },
      new MemoryZones(),
      silent,
    )
    assert.equal(d.address(), null)
    await d.start()
    assert.deepEqual(d.address(), { host: '127.0.0.1', port: 53 })
    await d.stop()
    assert.equal(d.address(), null)
  })
})

describe('DNS driver configuration', () => {
  const powerdns = {
    HOSTAPI_DNS_DRIVER: 'powerdns',
    HOSTAPI_POWERDNS_URL: 'http://127.0.0.1:8081',
    HOSTAPI_POWERDNS_API_KEY: 's3cret',
  }

  it('reads HOSTAPI_DNS_DRIVER (builtin by default) and the HOSTAPI_POWERDNS_* settings', () => {
    assert.deepEqual(loadConfig({}).dnsDriver, { driver: 'builtin' })
    assert.deepEqual(loadConfig({ HOSTAPI_DNS_DRIVER: 'builtin', HOSTAPI_POWERDNS_URL: 'nonsense' }).dnsDriver, {
      driver: 'builtin',
    })
    assert.deepEqual(loadConfig(powerdns).dnsDriver, {
      driver: 'powerdns',
      url: 'http://127.0.0.1:8081',
      apiKey: 's3cret',
      serverId: 'localhost',
      maxBodyBytes: 2 * 1024 * 1024,
      concurrency: 4,
      probeMs: 2000,
      dnsAddress: null,
    })
    const named = loadConfig({ ...powerdns, HOSTAPI_POWERDNS_SERVER_ID: 'pdns1' }).dnsDriver
    assert.equal(named.driver === 'powerdns' && named.serverId, 'pdns1')
    const tuned = loadConfig({
      ...powerdns,
      HOSTAPI_POWERDNS_MAX_BODY_BYTES: '10485760',
      HOSTAPI_POWERDNS_CONCURRENCY: '1',
      HOSTAPI_POWERDNS_PROBE_MS: '500',
      HOSTAPI_POWERDNS_DNS_ADDRESS: '[::1]:5300',
    }).dnsDriver
    assert.deepEqual(
      tuned.driver === 'powerdns' && [tuned.maxBodyBytes, tuned.concurrency, tuned.probeMs, tuned.dnsAddress],
      [10485760, 1, 500, { host: '::1', port: 5300 }],
    )
  })

  it('lists what is wrong with the other problems', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env)
      } catch (err) {
        if (err instanceof ConfigError) return err.problems
        throw err
      }
      return []
    }
    assert.deepEqual(problems({ HOSTAPI_DNS_DRIVER: 'powerdns', HOSTAPI_PORT: 'x' }).sort(), [
      'HOSTAPI_PORT must be an integer from 0 to 65535 (got "x")',
      'HOSTAPI_POWERDNS_API_KEY must be set when HOSTAPI_DNS_DRIVER is powerdns',
      'HOSTAPI_POWERDNS_URL must be set when HOSTAPI_DNS_DRIVER is powerdns',
    ])
    assert.deepEqual(problems({ ...powerdns, HOSTAPI_POWERDNS_URL: 'ftp://x' }), [
      'HOSTAPI_POWERDNS_URL must be an http(s) URL (got "ftp://x")',
    ])
    assert.deepEqual(problems({ HOSTAPI_DNS_DRIVER: 'bind' }), [
      'HOSTAPI_DNS_DRIVER must be builtin or powerdns (got "bind")',
    ])
  })

  it('picks the driver the configuration names', () => {
    const zones = new MemoryZones()
    assert.ok(dnsDriverFor(loadConfig({}), zones, silent) instanceof BuiltinDnsServer)
    assert.ok(dnsDriverFor(loadConfig(powerdns), zones, silent) instanceof PowerDnsDriver)
  })
})
