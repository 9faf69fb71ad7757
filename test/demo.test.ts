import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import pino from 'pino'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { freePort } from './helpers/dns.js'
import { describeWithPebble, startPebble, type Pebble } from './helpers/pebble.js'
import { certificateNames, opensslCsr, opensslVerify } from './helpers/pki.js'
import { eventually } from './helpers/wait.js'

// The demo data every area seeds on an empty database, read through the API with the demo key.
forEachDialect((dialect) => {
  describe(`demo data (${dialect})`, () => {
    let t: TestApp
    let key: string
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_DEMO: '1' } })
      key = t.server.demoKey!
    })
    after(() => t.close())
    const get = async (path: string) => (await t.request('GET', path, { key })).body

    it('seeds three domains with tags, contacts and records', async () => {
      const domains = (await get('/domains')).data.domains
      assert.deepEqual(
        domains.map((d: { domain: string; tags: string[] }) => [d.domain, d.tags]),
        [
          ['demo-shop.nl', ['web', 'shop']],
          ['demo-blog.com', ['web']],
          ['demo-mail.eu', ['mail']],
        ],
      )
      assert.deepEqual(
        (await get('/domains?tags=mail')).data.domains.map((d: { domain: string }) => d.domain),
        ['demo-mail.eu'],
      )
      const shop = (await get('/domains/demo-shop.nl')).data
      assert.equal(shop.handles.owner.name, 'Demo B.V.')
      assert.equal(shop.handles.owner.type, 'company')
      const records = (await get('/domains/demo-blog.com/dns')).data.records
      assert.ok(
        records.some(
          (r: { type: string; name: string; value: string }) =>
            r.type === 'TXT' && r.name === '_acme-challenge.demo-blog.com.',
        ),
      )
      assert.ok(
        records.some((r: { type: string; value: string }) => r.type === 'MX' && r.value === '10 mail.demo-blog.com.'),
      )
      assert.equal(
        (await get('/domains/demo-blog.com/auth-code')).status,
        200,
        'the unlocked demo domain gives its auth code',
      )
    })

    it('seeds a contact profile, a nameserver profile and a DNS template', async () => {
      assert.equal((await get('/domains/contacts')).data.contacts.length, 1)
      const ns = (await get('/domains/nameservers')).data.profiles.map((p: { alias: string }) => p.alias)
      assert.deepEqual(ns, ['default-mijnhost', 'demo-external'])
      assert.deepEqual(
        (await get('/domains/dns-templates')).data.templates.map((x: { alias: string; default: number }) => [
          x.alias,
          x.default,
        ]),
        [['Website + mail', 1]],
      )
    })

    it('seeds one open order in status error: a transfer with a wrong code', async () => {
      const orders = (await get('/orders')).data.orders
      const transfer = orders.find((o: { services: { type: string }[] }) => o.services.some((s) => s.type === 'domain'))
      assert.ok(transfer)
      assert.equal(transfer.status, 'error')
      assert.deepEqual(transfer.services[0].errors, [
        { code: 'transfer_code', description: 'The transfer code is not correct' },
      ])
      assert.equal(transfer.services[0].name, 'example.org')
    })

    it('seeds a profile, two payment methods with direct debit as default, and paid and open invoices with PDFs', async () => {
      const profile = (await get('/account/profile')).data
      assert.equal(profile.city, 'Amsterdam')
      assert.equal(profile.company, 'Demo B.V.')
      const pm = (await get('/account/paymethods')).data
      assert.equal(pm.paymethods.length, 2)
      assert.equal(pm.default, 'directdebit')
      assert.equal(pm.default_paymethod_id, pm.paymethods[1].id)
      // Other areas' demo orders add invoices of their own; the account area's are the ones without an order.
      const invoices = (await get('/account/invoices?limit=100')).data.invoices
      const details = await Promise.all(
        invoices.map(async (i: { invoice_nr: string }) => (await get(`/account/invoices/${i.invoice_nr}`)).data),
      )
      const seeded = details.filter((d: { order_id: number | null }) => d.order_id === null)
      assert.deepEqual(
        seeded.map((i: { paid: boolean }) => i.paid),
        [false, true, true],
      )
      assert.equal(seeded[1].lines.length, 2)
      const pdf = await t.request('GET', `/account/invoices/${seeded[0].invoice_nr}/pdf`, { key })
      assert.equal(pdf.status, 200)
      assert.equal((pdf.body as Buffer).subarray(0, 5).toString(), '%PDF-')
    })

    it('seeds tickets with threads from both sides', async () => {
      const tickets = (await get('/account/tickets')).data.tickets
      assert.equal(tickets.length, 2)
      assert.deepEqual(tickets.map((x: { status: string }) => x.status).sort(), ['answered', 'closed'])
      for (const row of tickets) {
        const d = (await get(`/account/tickets/${row.ticket_number}`)).data
        assert.deepEqual(
          d.thread.map((m: { from: string }) => m.from),
          ['user', 'support'],
        )
      }
    })

    it('seeds commissions that are paid out, approved, rejected and pending, and one affiliate payment', async () => {
      const commissions = (await get('/affiliate/commissions')).data.commissions
      assert.equal(commissions.length, 4)
      const statuses = await Promise.all(
        commissions.map(async (c: { id: number }) => (await get(`/affiliate/commissions/${c.id}`)).data.status),
      )
      assert.deepEqual(statuses, ['pending', 'rejected', 'approved', 'paid'])
      const payments = (await get('/affiliate/payments')).data.payments
      assert.equal(payments.length, 1)
      assert.equal(payments[0].amount, 18)
    })

    it('seeds an issued certificate signed by the built-in CA', async () => {
      const list = (await get('/certificates')).data.certificates
      assert.deepEqual(
        list.map((c: { common_name: string; certificate_status: string }) => [c.common_name, c.certificate_status]),
        [['www.demo-shop.nl', 'ACT']],
      )
      const c = (await get(`/certificates/${list[0].id}`)).data
      const root = await t.ctx.drivers.ca.rootCertificate()
      assert.match(opensslVerify(root!, c.intermediate_certificate, c.certificate), /OK$/)
    })

    it('seeds a running and a stopped VPS with backups, an SSH key, a VPC with a subnet and a floating IP', async () => {
      const list = (await get('/vps')).data.vps
      assert.deepEqual(
        list.map((v: { hostname: string; status: string }) => [v.hostname, v.status]),
        [
          ['web1.demo.example', 'running'],
          ['db1.demo.example', 'stopped'],
        ],
      )
      for (const v of list) {
        const d = (await get(`/vps/${v.id}`)).data
        assert.equal(d.vps_locked, false)
        assert.deepEqual(
          d.private_networks.map((n: { cidr: string }) => n.cidr),
          ['10.10.0.0/24'],
        )
        const backups = await get(`/vps/${v.id}/backups`)
        assert.ok(backups.details.count >= 1)
        assert.equal(backups.details.backups[0].type, 'manual')
      }
      assert.equal((await get('/vps/ssh-keys')).data.ssh_keys.length, 1)
      const vpc = (await get(`/vps/${list[0].id}/vpc`)).data
      assert.deepEqual(
        vpc.subnets.map((s: { name: string; cidr: string }) => [s.name, s.cidr]),
        [['backend', '10.10.0.0/24']],
      )
      const floating = (await get('/vps/floating-ips')).data.floating_ips
      assert.deepEqual(
        floating.map((f: { vps_id: number }) => f.vps_id),
        [list[0].id],
      )
      assert.equal((await get(`/vps/${list[0].id}/firewall`)).data.rules.length, 4)
      // The install jobs queued while seeding find their tasks done.
      await t.ctx.jobs.drain()
      assert.equal((await get(`/vps/${list[1].id}`)).data.status, 'stopped')
    })
  })
})

// With an ACME CA the demo starts and its certificate is a package awaiting its request: the seed sends no order
// for names the demo does not control. Requested like any package, it goes through the ACME order to ACT.
describeWithPebble('demo data with an ACME CA (pebble)', () => {
  let pebble: Pebble
  let t: TestApp
  let key: string
  const lines: string[] = []
  before(async () => {
    const dnsPort = await freePort()
    pebble = await startPebble({ dnsPort, httpPort: await freePort() })
    t = await startTestApp('sqlite', {
      log: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
      env: {
        HOSTAPI_DEMO: '1',
        HOSTAPI_DNS_PORT: String(dnsPort),
        HOSTAPI_JOBS: '1',
        HOSTAPI_JOB_POLL_MS: '50',
        HOSTAPI_CA_DRIVER: 'acme',
        HOSTAPI_ACME_DIRECTORY: pebble.directoryUrl,
        HOSTAPI_ACME_EMAIL: 'hostmaster@example.com',
        HOSTAPI_ACME_CA_BUNDLE: pebble.caBundle,
      },
    })
    key = t.server.demoKey!
  })
  after(async () => {
    await t?.close()
    await pebble?.close()
  })

  it('starts with an unrequested demo certificate package, says so in the log, and issues it on request', async () => {
    const list = (await t.request('GET', '/certificates', { key })).body.data.certificates
    assert.deepEqual(
      list.map((c: { certificate_status: string; requested: boolean }) => [c.certificate_status, c.requested]),
      [['NEW', false]],
    )
    const said = lines
      .map((l) => JSON.parse(l))
      .find((l) => /^Demo certificate www\.demo-shop\.nl not issued/.test(l.msg))
    assert.ok(said, 'the start logs why the demo certificate is not issued')
    assert.equal(said.certificate_id, list[0].id)
    assert.equal(pebble.log().includes('demo-shop'), false, 'nothing about the demo names reached the CA')

    const r = await t.request('POST', `/certificates/${list[0].id}/request`, {
      key,
      body: {
        csr: opensslCsr('www.demo-shop.nl', ['www.demo-shop.nl']),
        validation_method: 'dns',
        auto_setup_dns: true,
      },
    })
    assert.equal(r.status, 200, r.text)
    const c = await eventually(
      async () => {
        const got = (await t.request('GET', `/certificates/${list[0].id}`, { key })).body.data
        assert.notEqual(got.certificate_status, 'PEN', got.status_message)
        return got
      },
      { what: 'the certificate is no longer pending', intervalMs: 100 },
    )
    assert.equal(c.certificate_status, 'ACT', c.status_message)
    assert.deepEqual(certificateNames(c.certificate).sans, ['www.demo-shop.nl'])
    assert.match(opensslVerify(await pebble.root(), c.intermediate_certificate, c.certificate), /OK$/)
  })
})
