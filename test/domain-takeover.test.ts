import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import dnsPacket, { type Answer, type Packet } from 'dns-packet'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { freePort, insertZone, queryUdp } from './helpers/dns.js'
import { uniqueName } from './helpers/fixtures/domains.js'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ApiError } from '../src/errors.js'
import { ymd } from '../src/clock.js'
import { readSeedFile, SeedFileError } from '../src/seed/seed-file.js'

const dataOf = (p: Packet, type: string) =>
  (p.answers ?? []).filter((a) => a.type === type).map((a) => (a as Answer & { data: unknown }).data)
const rcodeOf = (p: Packet) => (p as Packet & { rcode: string }).rcode
const aa = (p: Packet) => ((p.flags ?? 0) & dnsPacket.AUTHORITATIVE_ANSWER) !== 0

// One account must never take over another's names: not by ordering a name below, at or above a domain it
// does not hold, not through a name that is not registrable, and not through rows in the tables that overlap.
forEachDialect((dialect) => {
  describe(`domain names across accounts (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    let port: number
    const privateSuffix = 'hosted-sites.nl'

    before(async () => {
      port = await freePort()
      t = await startTestApp(dialect, {
        env: { HOSTAPI_DNS_PORT: String(port), HOSTAPI_PRIVATE_SUFFIXES: privateSuffix },
      })
      a = await t.account('Holder A')
      b = await t.account('Other B')
    })
    after(() => t.close())

    const availability = async (name: string, key = b.key) =>
      (await t.request('GET', `/domains/availability/${encodeURIComponent(name)}`, { key })).body
    const order = async (body: Record<string, unknown>, key = b.key, dryRun = false) =>
      t.request('POST', `/domains/order${dryRun ? '?test=1' : ''}`, { key, body })
    const orderAndProcess = async (name: string, key: string) => {
      const r = await order({ domain: name }, key)
      assert.equal(r.status, 200, r.text)
      await t.ctx.jobs.drain()
      return r.body.data.order_id as number
    }

    it("B can neither see as available nor order a name below A's domain, A's domain itself, or the suffix above it", async () => {
      const nl = uniqueName('shop', 'nl')
      const uk = uniqueName('shop', 'co.uk')
      await orderAndProcess(nl, a.key)
      await orderAndProcess(uk, a.key)
      assert.equal((await t.request('GET', `/domains/${uk}`, { key: a.key })).body.data.status, 'active')

      for (const below of [`mail.${nl}`, `www.${uk}`, `a.b.${nl}`]) {
        assert.deepEqual(
          await availability(below),
          {
            status: 200,
            status_description: 'Request successful',
            data: { domain: below, status: 'invalid', is_premium: false, premium_price: null },
          },
          below,
        )
        assert.deepEqual(
          (await order({ domain: below })).body,
          { status: 400, status_description: 'Invalid domain name' },
          below,
        )
        assert.deepEqual(
          (await order({ domain: below, type: 'transfer', transfer_code: 'X' })).body,
          { status: 400, status_description: 'Invalid domain name' },
          below,
        )
      }
      for (const suffix of ['co.uk']) {
        assert.equal((await availability(suffix)).data.status, 'invalid', suffix)
        assert.deepEqual(
          (await order({ domain: suffix })).body,
          { status: 400, status_description: 'Invalid domain name' },
          suffix,
        )
      }
      for (const held of [nl, uk]) {
        assert.equal((await availability(held)).data.status, 'unavailable', held)
        assert.deepEqual((await order({ domain: held })).body, {
          status: 400,
          status_description: 'This domain is not available for registration',
        })
      }
      // Nothing of B's reached the tables.
      const rows = await t.ctx.db.selectFrom('domains').select('name').where('account_id', '=', b.accountId).execute()
      assert.deepEqual(rows, [])
    })

    it('refuses names that are not registrable: a public suffix, a name below a registrable one, bad punycode, hostile text', async () => {
      for (const name of [
        'co.uk',
        'a.b.example.com',
        'www.example.co.uk',
        'xn--.nl',
        'xn--a.nl',
        'ab--cd.nl',
        'a%2eb.nl',
        '\u{1F4A9}.nl',
        `${'a'.repeat(64)}.nl`,
      ]) {
        assert.equal((await availability(name)).data?.status ?? 'refused', 'invalid', name)
        const r = await order({ domain: name })
        assert.deepEqual(r.body, { status: 400, status_description: 'Invalid domain name' }, name)
      }
      // NUL never reaches the name rules: the request itself is refused.
      assert.equal((await order({ domain: 'exa\u0000mple.nl' })).status, 400)
      // A U-label is stored as its A-label.
      const idn = `bücher-${Date.now()}.nl`
      const check = await availability(idn)
      assert.equal(check.data.status, 'available')
      assert.match(check.data.domain, /^xn--b/)
      // Domains made inside the service obey the rule too (demo data, seed files, the order job).
      await assert.rejects(
        t.ctx.services.domains.create(t.ctx.db, {
          accountId: b.accountId,
          name: 'a.b.example.com',
          renewalDate: ymd(new Date()),
          nameserverProfile: null,
          nameservers: [],
          contacts: {},
        }),
        (err) => err instanceof ApiError && err.message === 'Invalid domain name',
      )
    })

    it("a held zone blocks every name above and below it, even where bad data or the operator's suffixes make such a name registrable", async () => {
      // A row below a registrable name (written straight into the table, as bad or old data would be).
      const parent = uniqueName('legacy', 'nl')
      await insertZone(t.ctx.db, a.accountId, `sub.${parent}`)
      assert.equal((await availability(parent)).data.status, 'unavailable')
      assert.deepEqual((await order({ domain: parent })).body, {
        status: 400,
        status_description: 'This domain is not available for registration',
      })
      await assert.rejects(
        t.ctx.services.domains.create(t.ctx.db, {
          accountId: b.accountId,
          name: parent,
          renewalDate: ymd(new Date()),
          nameserverProfile: null,
          nameservers: [],
          contacts: {},
        }),
        (err) => err instanceof ApiError && err.message === 'This domain is not available for registration',
      )

      // A holds the operator's private suffix itself (held before the suffix was configured): names below it are registrable, but not B's.
      await insertZone(t.ctx.db, a.accountId, privateSuffix)
      const below = `shop.${privateSuffix}`
      assert.equal((await availability(below)).data.status, 'unavailable')
      assert.deepEqual((await order({ domain: below })).body, {
        status: 400,
        status_description: 'This domain is not available for registration',
      })
      assert.equal(
        (await availability(`www.shop.${privateSuffix}`)).data.status,
        'invalid',
        'two labels below a suffix',
      )
    })

    it("another account's failed order does not block a name, and is answered exactly like no order at all", async () => {
      const name = uniqueName('failed', 'com')
      const fresh = uniqueName('fresh', 'com')
      const tpl = (
        await t.request('POST', '/domains/dns-templates', {
          key: a.key,
          body: { alias: `gone-${Date.now()}`, records: [{ type: 'A', name: '', value: '192.0.2.1' }] },
        })
      ).body.data
      const failed = await order({ domain: name, dns_template_id: tpl.id }, a.key)
      assert.equal(failed.status, 200, failed.text)
      await t.request('DELETE', `/domains/dns-templates/${tpl.id}`, { key: a.key })
      await t.ctx.jobs.drain()
      const aOrder = (await t.request('GET', `/orders/${failed.body.data.order_id}`, { key: a.key })).body.data
      assert.equal(aOrder.status, 'error')
      // A's own open order still stops A from ordering the name twice.
      assert.deepEqual((await order({ domain: name }, a.key)).body, {
        status: 400,
        status_description: 'This domain is already in an open order',
      })

      // For B the name looks exactly like one nobody ordered.
      const seen = await availability(name)
      const never = await availability(fresh)
      assert.deepEqual({ ...seen.data, domain: 'x' }, { ...never.data, domain: 'x' })
      assert.equal(seen.data.status, 'available')
      const dry = await order({ domain: name }, b.key, true)
      const dryFresh = await order({ domain: fresh }, b.key, true)
      assert.deepEqual([dry.status, dry.body], [dryFresh.status, dryFresh.body])
      assert.deepEqual(dry.body.data, { order_id: 0 })

      const bOrder = await orderAndProcess(name, b.key)
      assert.equal((await t.request('GET', `/orders/${bOrder}`, { key: b.key })).body.data.status, 'completed')
      assert.equal((await t.request('GET', `/domains/${name}`, { key: b.key })).body.data.status, 'active')

      // A correcting its failed order now finds the name taken.
      await t.request('PUT', `/orders/${aOrder.order_id}`, {
        key: a.key,
        body: { cart_id: aOrder.services[0].cart_id, domain: { dns_template_id: 0 } },
      })
      await t.ctx.jobs.drain()
      const after = (await t.request('GET', `/orders/${aOrder.order_id}`, { key: a.key })).body.data
      assert.equal(after.status, 'error')
      assert.equal(after.services[0].errors[0].code, 'unavailable')
      assert.deepEqual((await t.request('GET', `/domains/${name}`, { key: a.key })).body, {
        status: 400,
        status_description: 'You have no access to this resource',
      })
    })

    it('the admin API and seed files take registrable names only', async () => {
      const token = (await t.ctx.services.admin.createToken('takeover')).token
      const adm = (method: string, p: string, body?: unknown) =>
        t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${token}` } })
      for (const name of ['co.uk', 'www.example.co.uk', 'xn--a.nl']) {
        assert.deepEqual(
          (await adm('PUT', `/reserved-names/${name}`, { reason: 'x' })).body,
          { status: 400, status_description: 'Invalid domain name' },
          name,
        )
        assert.deepEqual(
          (await adm('PUT', `/premium-names/${name}`, { register_price: 100, renew_price: 10 })).body,
          { status: 400, status_description: 'Invalid domain name' },
          name,
        )
      }
      assert.equal(
        (await adm('PUT', '/reserved-names/B\u00fccher-kept.nl', { reason: 'x' })).body.data.name,
        'xn--bcher-kept-9db.nl',
        'a U-label is stored as its A-label',
      )

      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-seed-'))
      try {
        const file = path.join(dir, 'seed.yaml')
        fs.writeFileSync(
          file,
          'accounts:\n  - name: X\n    email: x@x.test\n    domains:\n      - name: mail.demo-shop.nl\n      - name: co.uk\n      - name: shop.example.nl\n',
        )
        await assert.rejects(
          readSeedFile(file, t.ctx.services.domains.names),
          (err) =>
            err instanceof SeedFileError &&
            err.problems.length === 3 &&
            err.problems.every((p) => p.includes('invalid domain name')),
        )
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })

    it("the DNS server answers A's names only from A's zone, even when rogue rows overlap it", async () => {
      const zone = uniqueName('dnsa', 'nl')
      await insertZone(t.ctx.db, a.accountId, zone, {
        records: [
          { type: 'A', name: zone, value: '192.0.2.10' },
          { type: 'MX', name: zone, value: `10 mail.${zone}.` },
          { type: 'A', name: `mail.${zone}`, value: '192.0.2.25' },
        ],
      })
      // B's rows: one below A's zone, one at the TLD with a wildcard (bad data; the API cannot create either).
      await insertZone(t.ctx.db, b.accountId, `mail.${zone}`, {
        records: [{ type: 'A', name: `mail.${zone}`, value: '203.0.113.66' }],
      })
      await insertZone(t.ctx.db, b.accountId, `www.${zone}`, {
        records: [{ type: 'A', name: `www.${zone}`, value: '203.0.113.67' }],
      })
      await insertZone(t.ctx.db, b.accountId, 'nl', {
        records: [
          { type: 'A', name: '*.nl', value: '203.0.113.99' },
          { type: 'A', name: `www.${zone}`, value: '203.0.113.77' },
        ],
      })

      const mx = await queryUdp(port, zone, 'MX')
      assert.deepEqual(dataOf(mx, 'MX'), [{ preference: 10, exchange: `mail.${zone}` }])
      const mail = await queryUdp(port, `mail.${zone}`, 'A')
      assert.ok(aa(mail))
      assert.deepEqual(dataOf(mail, 'A'), ['192.0.2.25'], "the MX target is answered from A's zone")
      const www = await queryUdp(port, `www.${zone}`, 'A')
      assert.equal(rcodeOf(www), 'NXDOMAIN', "a name A does not have is A's NXDOMAIN, not B's record")
      assert.equal((www.authorities ?? [])[0]?.name, zone)
      assert.equal(
        rcodeOf(await queryUdp(port, `nobody-${Date.now()}.nl`, 'A')),
        'REFUSED',
        'the TLD row answers nothing',
      )
      assert.equal(rcodeOf(await queryUdp(port, 'nl', 'SOA')), 'REFUSED')
      assert.deepEqual(dataOf(await queryUdp(port, zone, 'A'), 'A'), ['192.0.2.10'])
    })
  })
})
