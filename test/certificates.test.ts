import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import {
  forEachDialect,
  rawRows,
  startTestApp,
  TEST_SECRET_KEY,
  type TestAccount,
  type TestApp,
} from './helpers/app.js'
import { keyId, parseSecretKey } from '../src/lib/secret-box.js'
import { makeCertificatePackage } from './helpers/fixtures/certificates.js'
import { certificateNames, csrNames, keyMatches, openssl, opensslCsr, opensslVerify } from './helpers/pki.js'

const csrBody = (common_name: string, extra: Record<string, unknown> = {}) => ({
  common_name,
  organization: 'Example B.V.',
  email: 'admin@example.com',
  country: 'NL',
  state: 'Noord-Holland',
  locality: 'Amsterdam',
  ...extra,
})

forEachDialect((dialect) => {
  describe(`certificates over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    const clock = new ManualClock()
    before(async () => {
      t = await startTestApp(dialect, { clock })
      a = await t.account('Certificates A')
      b = await t.account('Certificates B')
    })
    after(() => t.close())

    const get = (id: number, key = a.key) => t.request('GET', `/certificates/${id}`, { key })
    const request = (id: number, body: unknown, key = a.key) =>
      t.request('POST', `/certificates/${id}/request`, { key, body })
    /** Puts `name` in `owner`'s account as an active domain with an empty zone. */
    const hostDomain = (owner: TestAccount, name: string) =>
      t.ctx.services.domains.create(t.ctx.db, {
        accountId: owner.accountId,
        name,
        renewalDate: '2030-01-01',
        nameserverProfile: null,
        nameservers: [],
        contacts: {},
      })
    /** The TXT values at `fqdn` in the zone, as the DNS API shows them. */
    const txtIn = async (zone: string, fqdn: string, key = a.key): Promise<string[]> => {
      const r = await t.request('GET', `/domains/${zone}/dns`, { key })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      return r.body.data.records
        .filter((x: { type: string; name: string }) => x.type === 'TXT' && x.name === `${fqdn}.`)
        .map((x: { value: string }) => x.value)
    }

    it('lists the products with their prices per duration', async () => {
      const r = await t.request('GET', '/certificates/products', { key: a.key })
      assert.equal(r.status, 200)
      assert.equal(r.body.status_description, 'Request successful')
      const products = r.body.data.products
      assert.ok(products.length >= 3)
      const single = products.find((p: { id: number }) => p.id === 1)
      assert.deepEqual(single, {
        id: 1,
        product_id: 1,
        name: 'hostapi SSL',
        type: 'single',
        validation: 'DV',
        max_domains: 1,
        wildcard: false,
        duration_options: [1, 2],
        prices: [
          { duration: 1, price: 9.95 },
          { duration: 2, price: 19.9 },
        ],
      })
      assert.ok(products.some((p: { wildcard: boolean }) => p.wildcard))
    })

    it('orders a certificate: the order job creates a package that is not requested yet', async () => {
      const r = await t.request('POST', '/certificates/order', { key: a.key, body: { product_id: 2, duration: 2 } })
      assert.equal(r.status, 200)
      const orderId = r.body.data.order_id
      assert.equal(typeof orderId, 'number')
      // The answer says what was ordered and charged, not only the order's id.
      assert.deepEqual(r.body.data, {
        order_id: orderId,
        status: 'open',
        product_id: 2,
        product: 'hostapi SSL Wildcard',
        duration: 2,
        price: 99.9,
      })
      const pending = await t.request('GET', `/orders/${orderId}`, { key: a.key })
      assert.equal(pending.body.data.services[0].type, 'certificate')
      assert.equal(pending.body.data.services[0].name, 'hostapi SSL Wildcard')
      assert.equal(pending.body.data.total_price, 99.9)
      await t.ctx.jobs.drain()
      const done = await t.request('GET', `/orders/${orderId}`, { key: a.key })
      assert.equal(done.body.data.status, 'completed')
      const id = done.body.data.services[0].result.certificate_id
      const c = await get(id)
      assert.equal(c.status, 200)
      const d = c.body.data
      assert.equal(d.id, id)
      assert.equal(d.requested, false)
      assert.equal(d.domain, '', 'a package not requested yet has an empty domain')
      assert.equal(d.certificate_status, 'NEW')
      assert.equal(d.product_id, 2)
      assert.equal(d.product, 'hostapi SSL Wildcard')
      assert.equal(d.duration, 2)
      assert.equal(d.order_id, orderId)
      assert.equal(d.common_name, null)
      assert.deepEqual(d.domains, [])
      assert.equal(d.certificate, null)
      assert.equal(d.validation, null)
      const endYear = clock.now().getUTCFullYear() + 2
      assert.ok(d.end_date.startsWith(String(endYear)), d.end_date)
      assert.match(d.created, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)

      // The order is charged: an invoice for it with the product line, excluding VAT.
      const invoices = (await t.request('GET', '/account/invoices?limit=100', { key: a.key })).body.data.invoices
      const details = await Promise.all(
        invoices.map(
          async (i: { invoice_nr: string }) =>
            (await t.request('GET', `/account/invoices/${i.invoice_nr}`, { key: a.key })).body.data,
        ),
      )
      const invoice = details.find((i: { order_id: number | null }) => i.order_id === orderId)
      assert.ok(invoice, 'an invoice for the order')
      assert.deepEqual(
        invoice.lines.map((l: { description: string; total_price: number }) => [l.description, l.total_price]),
        [['hostapi SSL Wildcard, 2 years', 99.9]],
      )
    })

    it('checks an order with ?test=1 without ordering or charging', async () => {
      const c = await t.account('Dry run')
      const r = await t.request('POST', '/certificates/order?test=1', {
        key: c.key,
        body: { product_id: 1, duration: 1 },
      })
      assert.equal(r.status, 200)
      assert.equal(typeof r.body.data.order_id, 'number')
      const bad = await t.request('POST', '/certificates/order?test=1', {
        key: c.key,
        body: { product_id: 1, duration: 5 },
      })
      assert.equal(bad.status, 400)
      await t.ctx.jobs.drain()
      assert.deepEqual((await t.request('GET', '/orders', { key: c.key })).body.data.orders, [])
      assert.equal((await t.request('GET', '/certificates', { key: c.key })).body.data.pagination.total, 0)
      assert.equal((await t.request('GET', '/account/invoices', { key: c.key })).body.data.pagination.total, 0)
    })

    it('answers the same order again for a repeated Idempotency-Key', async () => {
      const headers = { 'idempotency-key': `cert-${dialect}-1` }
      const one = await t.request('POST', '/certificates/order', {
        key: a.key,
        body: { product_id: 1, duration: 1 },
        headers,
      })
      const two = await t.request('POST', '/certificates/order', {
        key: a.key,
        body: { product_id: 1, duration: 1 },
        headers,
      })
      assert.equal(one.status, 200)
      assert.deepEqual(two.body, one.body)
      const other = await t.request('POST', '/certificates/order', {
        key: a.key,
        body: { product_id: 1, duration: 2 },
        headers,
      })
      assert.equal(other.status, 409)
    })

    it('orders for one year when the body names no duration', async () => {
      const r = await t.request('POST', '/certificates/order', { key: a.key, body: { product_id: 1 } })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      const order = (await t.request('GET', `/orders/${r.body.data.order_id}`, { key: a.key })).body.data
      assert.equal(order.total_price, 9.95)
      await t.ctx.jobs.drain()
      const done = (await t.request('GET', `/orders/${r.body.data.order_id}`, { key: a.key })).body.data
      const c = await get(done.services[0].result.certificate_id)
      assert.equal(c.body.data.duration, 1)
    })

    it('refuses an unknown product, a duration the product does not have and a bad body', async () => {
      const unknown = await t.request('POST', '/certificates/order', {
        key: a.key,
        body: { product_id: 99, duration: 1 },
      })
      assert.deepEqual(unknown.body, { status: 400, status_description: 'Unknown certificate product' })
      const duration = await t.request('POST', '/certificates/order', {
        key: a.key,
        body: { product_id: 1, duration: 3 },
      })
      assert.deepEqual(duration.body, {
        status: 400,
        status_description: 'Invalid duration: this product can be ordered for 1 or 2 year(s)',
      })
      const missing = await t.request('POST', '/certificates/order', { key: a.key, body: { duration: 1 } })
      assert.equal(missing.status, 400)
      assert.equal(missing.body.status_description, 'Missing product_id')
      const wrong = await t.request('POST', '/certificates/order', {
        key: a.key,
        body: { product_id: 'one', duration: 1 },
      })
      assert.equal(wrong.status, 400)
    })

    it('generates a real RSA CSR and private key (2048 by default, 3072 on request)', async () => {
      for (const bits of [undefined, 3072]) {
        const r = await t.request('POST', '/certificates/csr', {
          key: a.key,
          body: csrBody('www.example.com', bits ? { bits, unit: 'IT' } : {}),
        })
        assert.equal(r.status, 200, JSON.stringify(r.body))
        const { csr, private_key } = r.body.data
        assert.match(csr, /^-----BEGIN CERTIFICATE REQUEST-----\n/)
        assert.match(private_key, /^-----BEGIN PRIVATE KEY-----\n/)
        assert.match(openssl(['req', '-noout', '-verify'], csr), /^$/)
        const text = openssl(['req', '-noout', '-text', '-nameopt', 'RFC2253'], csr)
        assert.ok(text.includes(`Public-Key: (${bits ?? 2048} bit)`), text)
        assert.match(text, /rsaEncryption/)
        const subject = openssl(['req', '-noout', '-subject', '-nameopt', 'RFC2253'], csr)
        for (const part of [
          'CN=www.example.com',
          'O=Example B.V.',
          'L=Amsterdam',
          'ST=Noord-Holland',
          'C=NL',
          'emailAddress=admin@example.com',
        ]) {
          assert.ok(subject.includes(part), `${part} in ${subject}`)
        }
        if (bits) assert.ok(subject.includes('OU=IT'))
        assert.deepEqual(csrNames(csr), { cn: 'www.example.com', sans: ['www.example.com'] })
        assert.ok(keyMatches(private_key, csr, 'req'), 'the private key belongs to the CSR')
      }
    })

    it('generates an ECDSA P-256 CSR for key_type ec', async () => {
      const r = await t.request('POST', '/certificates/csr', {
        key: a.key,
        body: csrBody('*.example.com', { key_type: 'ec' }),
      })
      assert.equal(r.status, 200)
      const text = openssl(['req', '-noout', '-text'], r.body.data.csr)
      assert.match(text, /id-ecPublicKey/)
      assert.match(text, /NIST CURVE: P-256|prime256v1/)
      assert.deepEqual(csrNames(r.body.data.csr), { cn: '*.example.com', sans: ['*.example.com'] })
      assert.ok(keyMatches(r.body.data.private_key, r.body.data.csr, 'req'))
    })

    it('answers clear 400s for bad CSR input', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [
          csrBody('not a domain'),
          'Invalid common_name: must be a domain name such as www.example.com or *.example.com',
        ],
        [csrBody('localhost'), 'Invalid common_name: must be a domain name such as www.example.com or *.example.com'],
        [
          csrBody('www.example.com', { country: 'N1' }),
          'Invalid country: must be a two-letter ISO 3166 code such as NL',
        ],
        [csrBody('www.example.com', { email: 'nobody' }), 'Invalid email: must be an e-mail address'],
        [csrBody('www.example.com', { key_type: 'ec', bits: 4096 }), 'bits applies to key_type rsa only'],
      ]
      for (const [body, text] of cases) {
        const r = await t.request('POST', '/certificates/csr', { key: a.key, body })
        assert.deepEqual(r.body, { status: 400, status_description: text }, JSON.stringify(body))
      }
      const bits = await t.request('POST', '/certificates/csr', {
        key: a.key,
        body: csrBody('www.example.com', { bits: 1024 }),
      })
      assert.equal(bits.status, 400)
      assert.match(bits.body.status_description, /^Invalid bits/)
      const type = await t.request('POST', '/certificates/csr', {
        key: a.key,
        body: csrBody('www.example.com', { key_type: 'dsa' }),
      })
      assert.equal(type.status, 400)
      assert.match(type.body.status_description, /^Invalid key_type/)
      const { organization: _o, ...noOrg } = csrBody('www.example.com')
      const missing = await t.request('POST', '/certificates/csr', { key: a.key, body: noOrg })
      assert.deepEqual([missing.status, missing.body.status_description], [400, 'Missing organization'])
    })

    it('issues a certificate over HTTP validation that verifies against the returned chain', async () => {
      const id = await makeCertificatePackage(t, a)
      const gen = await t.request('POST', '/certificates/csr', { key: a.key, body: csrBody('shop.example.com') })
      const r = await request(id, { csr: gen.body.data.csr, validation_method: 'http' })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      assert.equal(r.body.status_description, 'Certificate requested')
      assert.equal(r.body.data.certificate_status, 'PEN')
      assert.equal(r.body.data.requested, true)
      assert.equal(r.body.data.common_name, 'shop.example.com')
      assert.equal(r.body.data.validation.method, 'http')
      assert.match(
        r.body.data.validation.http_files[0].url,
        /^http:\/\/shop\.example\.com\/\.well-known\/pki-validation\//,
      )
      assert.equal(r.body.data.certificate, null)

      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'ACT')
      assert.equal(c.status_message, null)
      assert.match(
        opensslVerify((await t.ctx.drivers.ca.rootCertificate())!, c.intermediate_certificate, c.certificate),
        /OK$/,
      )
      assert.deepEqual(certificateNames(c.certificate), { cn: 'shop.example.com', sans: ['shop.example.com'] })
      assert.ok(keyMatches(gen.body.data.private_key, c.certificate, 'x509'), 'the certificate certifies the CSR key')
      assert.match(c.valid_until, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
      assert.match(c.serial_number, /^[0-9a-f]+$/)
      assert.match(c.issued_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)

      // A reissue for another key: the current certificate stays until the new one is issued.
      const newCsr = opensslCsr('shop.example.com')
      const reissue = await request(id, { csr: newCsr, validation_method: 'http' })
      assert.equal(reissue.status, 200, JSON.stringify(reissue.body))
      assert.equal(reissue.body.data.certificate_status, 'PEN')
      assert.equal(reissue.body.data.certificate, c.certificate)
      const during = await request(id, { csr: newCsr, validation_method: 'http' })
      assert.deepEqual(during.body, { status: 400, status_description: 'This certificate has already been requested' })
      await t.ctx.jobs.drain()
      const reissued = (await get(id)).body.data
      assert.equal(reissued.certificate_status, 'ACT')
      assert.notEqual(reissued.serial_number, c.serial_number)
      assert.equal(
        openssl(['x509', '-noout', '-pubkey'], reissued.certificate),
        openssl(['req', '-noout', '-pubkey'], newCsr),
      )
    })

    it('keeps the CA private keys in the database sealed with the secret key, not as PEM', async () => {
      // Read straight from the table, after the issuance above.
      const rows = await rawRows(
        t.config.database,
        'select name, root_key, intermediate_key, root_cert from ca_authorities',
      )
      assert.equal(rows.length, 1)
      const sealed = new RegExp(
        `^v1:${keyId(parseSecretKey(TEST_SECRET_KEY)!)}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$`,
      )
      for (const column of ['root_key', 'intermediate_key']) {
        const value = String(rows[0][column])
        assert.match(value, sealed, column)
        assert.doesNotMatch(value, /PRIVATE KEY|MII/, column)
      }
      assert.match(
        String(rows[0].root_cert),
        /^-----BEGIN CERTIFICATE-----/,
        'certificates are public and stay readable',
      )
    })

    it('issues a DNS-validated certificate for a CSR made by the API, writing and removing the TXT record itself', async () => {
      const zone = `dns-${dialect}-example.nl`
      await hostDomain(a, zone)
      const id = await makeCertificatePackage(t, a)
      const gen = await t.request('POST', '/certificates/csr', { key: a.key, body: csrBody(`www.${zone}`) })
      assert.equal(gen.status, 200)
      const { csr, private_key } = gen.body.data

      const r = await request(id, { csr, validation_method: 'dns', auto_setup_dns: true })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      assert.equal(r.body.data.certificate_status, 'PEN')
      assert.equal(r.body.data.auto_setup_dns, true)
      const [record] = r.body.data.validation.dns_records
      assert.equal(record.name, `_pki-validation.www.${zone}`)
      assert.equal(record.auto_created, true)
      assert.equal(r.body.data.warning, null, 'every record was written')
      assert.deepEqual(await txtIn(zone, record.name), [record.value], 'the validation record is in the zone')

      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'ACT', c.status_message)
      assert.match(
        opensslVerify((await t.ctx.drivers.ca.rootCertificate())!, c.intermediate_certificate, c.certificate),
        /OK$/,
      )
      const asked = csrNames(csr)
      const got = certificateNames(c.certificate)
      assert.equal(got.cn, asked.cn)
      assert.deepEqual(got.sans, asked.sans)
      assert.equal(got.cn, `www.${zone}`)
      assert.ok(keyMatches(private_key, c.certificate, 'x509'))
      assert.deepEqual(await txtIn(zone, record.name), [], 'the validation record is removed once issued')
    })

    it('checks a request with ?test=1 without storing it or writing DNS records', async () => {
      const zone = `dry-${dialect}-example.nl`
      await hostDomain(a, zone)
      const id = await makeCertificatePackage(t, a)
      const r = await t.request('POST', `/certificates/${id}/request?test=1`, {
        key: a.key,
        body: { csr: opensslCsr(`www.${zone}`), validation_method: 'dns', auto_setup_dns: true },
      })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      assert.equal(r.body.data.certificate_status, 'PEN')
      assert.equal(r.body.data.common_name, `www.${zone}`)
      const [record] = r.body.data.validation.dns_records
      assert.equal(record.auto_created, true, 'the record would be written')
      assert.deepEqual(await txtIn(zone, record.name), [], 'but it is not')
      const bad = await t.request('POST', `/certificates/${id}/request?test=1`, {
        key: a.key,
        body: { csr: opensslCsr('*.example.com'), validation_method: 'dns' },
      })
      assert.deepEqual(bad.body, { status: 400, status_description: 'This product does not cover wildcard names' })
      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'NEW')
      assert.equal(c.validation, null)
    })

    it('waits for a DNS record the customer publishes, and keeps other TXT values at that name', async () => {
      const zone = `manual-${dialect}-example.nl`
      await hostDomain(a, zone)
      const names = [`*.${zone}`, zone]
      const id = await makeCertificatePackage(t, a, 2)
      const r = await request(id, { csr: opensslCsr(`*.${zone}`, names), validation_method: 'dns' })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      const records = r.body.data.validation.dns_records
      assert.equal(records.length, 1, 'the wildcard and its base share one record')
      assert.equal(records[0].auto_created, false)
      assert.deepEqual(await txtIn(zone, records[0].name), [])
      await t.ctx.jobs.drain()
      assert.equal((await get(id)).body.data.certificate_status, 'PEN')

      const patch = await t.request('PATCH', `/domains/${zone}/dns`, {
        key: a.key,
        body: { record: { type: 'TXT', name: records[0].name, value: records[0].value, ttl: 300 } },
      })
      assert.equal(patch.status, 200, JSON.stringify(patch.body))
      // A second certificate for the same name, set up automatically, must not overwrite the customer's record.
      const second = await makeCertificatePackage(t, a)
      const r2 = await request(second, { csr: opensslCsr(zone), validation_method: 'dns', auto_setup_dns: true })
      assert.equal(r2.status, 200, JSON.stringify(r2.body))
      assert.equal(r2.body.data.validation.dns_records[0].name, records[0].name)
      assert.deepEqual(
        (await txtIn(zone, records[0].name)).sort(),
        [records[0].value, r2.body.data.validation.dns_records[0].value].sort(),
      )

      clock.advance(2 * 60_000)
      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'ACT', c.status_message)
      assert.deepEqual(certificateNames(c.certificate), { cn: `*.${zone}`, sans: names })
      assert.match(
        opensslVerify((await t.ctx.drivers.ca.rootCertificate())!, c.intermediate_certificate, c.certificate),
        /OK$/,
      )
      assert.equal((await get(second)).body.data.certificate_status, 'ACT')
      assert.deepEqual(
        await txtIn(zone, records[0].name),
        [records[0].value],
        'only the record hostapi wrote is removed',
      )
    })

    it("refuses a name in another account's zone, whatever the validation method", async () => {
      const zone = `other-${dialect}-example.nl`
      await hostDomain(b, zone)
      const id = await makeCertificatePackage(t, a)
      for (const name of [`www.${zone}`, zone]) {
        for (const method of ['dns', 'http', 'https', 'email']) {
          const approver = method === 'email' ? { approver_email: `hostmaster@${zone}` } : {}
          const r = await request(id, {
            csr: opensslCsr(name),
            validation_method: method,
            ...(method === 'dns' ? { auto_setup_dns: true } : {}),
            ...approver,
          })
          assert.deepEqual(
            r.body,
            { status: 400, status_description: `${name} lies in a zone of another account` },
            `${name} by ${method}`,
          )
        }
      }
      assert.deepEqual(await txtIn(zone, `_pki-validation.${zone}`, b.key), [], 'nothing is written into its zone')
      await t.ctx.jobs.drain()
      assert.equal((await get(id)).body.data.certificate_status, 'NEW')
    })

    it('does not issue for a name whose zone another account holds by the time of validation', async () => {
      const zone = `later-${dialect}-example.nl`
      const id = await makeCertificatePackage(t, a)
      const r = await request(id, { csr: opensslCsr(`www.${zone}`), validation_method: 'http' })
      assert.equal(r.status, 200, r.text)
      await hostDomain(b, zone)
      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.notEqual(c.certificate_status, 'ACT')
      assert.equal(c.certificate, null)
    })

    it('validates by e-mail only with an approver address at the domain', async () => {
      const id = await makeCertificatePackage(t, a, 3)
      const csr = opensslCsr('www.example.org', ['www.example.org', 'example.org'], 'rsa:2048')
      const none = await request(id, { csr, validation_method: 'email' })
      assert.deepEqual(none.body, {
        status: 400,
        status_description: 'Missing approver_email: it is required for validation_method email',
      })
      const bad = await request(id, { csr, validation_method: 'email', approver_email: 'info@example.org' })
      assert.equal(bad.status, 400)
      assert.match(
        bad.body.status_description,
        /^approver_email must be admin@, administrator@, hostmaster@, postmaster@, webmaster@/,
      )
      const good = await request(id, { csr, validation_method: 'email', approver_email: 'hostmaster@example.org' })
      assert.equal(good.status, 200)
      assert.equal(good.body.data.approver_email, 'hostmaster@example.org')
      assert.equal(good.body.data.validation.approver_email, 'hostmaster@example.org')
      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'ACT')
      assert.deepEqual(certificateNames(c.certificate), {
        cn: 'www.example.org',
        sans: ['www.example.org', 'example.org'],
      })
      assert.deepEqual(c.domains, ['www.example.org', 'example.org'])
    })

    it('refuses CSRs that are not readable, do not verify, or ask for more than the product covers', async () => {
      const id = await makeCertificatePackage(t, a)
      const text = async (csr: string, method = 'dns') => (await request(id, { csr, validation_method: method })).body
      assert.deepEqual(await text('hello'), {
        status: 400,
        status_description: 'Invalid CSR: expected a PEM block -----BEGIN CERTIFICATE REQUEST-----',
      })
      assert.deepEqual(await text('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----'), {
        status: 400,
        status_description: 'Invalid CSR: it is not a readable PKCS#10 request',
      })
      const good = opensslCsr('www.example.com')
      const der = Buffer.from(good.replace(/-----[A-Z ]+-----|\s+/g, ''), 'base64')
      der[der.length - 3] ^= 0x55
      const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`
      assert.deepEqual(await text(tampered), {
        status: 400,
        status_description: 'Invalid CSR: its signature does not verify',
      })
      assert.deepEqual(await text(opensslCsr('www.example.com', ['www.example.com', 'example.com'])), {
        status: 400,
        status_description: 'This product covers at most 1 domain name(s)',
      })
      assert.deepEqual(await text(opensslCsr('*.example.com')), {
        status: 400,
        status_description: 'This product does not cover wildcard names',
      })
      assert.deepEqual(await text(opensslCsr('My Server')), {
        status: 400,
        status_description: 'Invalid CSR: the common name "my server" is not a domain name',
      })
      const wildcard = await makeCertificatePackage(t, a, 2)
      const http = await request(wildcard, {
        csr: opensslCsr('*.example.com', ['*.example.com', 'example.com']),
        validation_method: 'http',
      })
      assert.deepEqual(http.body, {
        status: 400,
        status_description: 'Wildcard names can only be validated by dns or email',
      })
      const badMethod = await request(id, { csr: good, validation_method: 'ftp' })
      assert.equal(badMethod.status, 400)
      assert.match(badMethod.body.status_description, /^Invalid validation_method/)
      // Nothing was stored by the refused requests.
      assert.equal((await get(id)).body.data.certificate_status, 'NEW')
    })

    it('waits for a DNS record it cannot find, rechecks later, and fails after seven days', async () => {
      const id = await makeCertificatePackage(t, a)
      const r = await request(id, {
        csr: opensslCsr('unhosted.invalid'),
        validation_method: 'dns',
        auto_setup_dns: true,
      })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      const [record] = r.body.data.validation.dns_records
      assert.deepEqual(
        { ...record, value: typeof record.value },
        { type: 'TXT', name: '_pki-validation.unhosted.invalid', value: 'string', auto_created: false },
      )
      // Still requested, with a warning that the automatic setup could not write the record.
      assert.equal(
        r.body.data.warning,
        'Automatic DNS setup could not write _pki-validation.unhosted.invalid: publish this TXT record yourself',
      )
      await t.ctx.jobs.drain()
      let c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'PEN')
      assert.equal(
        c.status_message,
        'The TXT record _pki-validation.unhosted.invalid does not hold the validation value yet',
      )
      assert.equal(c.certificate, null)
      clock.advance(8 * 24 * 3600_000)
      for (let i = 0; i < 20 && c.certificate_status === 'PEN'; i++) {
        await t.ctx.jobs.drain()
        c = (await get(id)).body.data
      }
      assert.equal(c.certificate_status, 'ERR')
      assert.match(c.status_message, /^Validation failed: The TXT record _pki-validation\.unhosted\.invalid/)
      assert.equal(c.warning, null, 'the warning goes with the wait for validation')
      // A failed certificate may be requested again.
      const again = await request(id, { csr: opensslCsr('again.example.com'), validation_method: 'http' })
      assert.equal(again.status, 200)
      await t.ctx.jobs.drain()
      assert.equal((await get(id)).body.data.certificate_status, 'ACT')
    })

    it('lists certificates newest first, paged, with search', async () => {
      const c = await t.account('Paging')
      const ids = [
        await makeCertificatePackage(t, c),
        await makeCertificatePackage(t, c),
        await makeCertificatePackage(t, c, 3),
      ]
      const gen = opensslCsr('paging.example.net')
      assert.equal((await request(ids[0], { csr: gen, validation_method: 'http' }, c.key)).status, 200)

      const all = await t.request('GET', '/certificates/', { key: c.key })
      assert.equal(all.status, 200)
      assert.deepEqual(
        all.body.data.certificates.map((x: { id: number }) => x.id),
        [...ids].reverse(),
      )
      assert.deepEqual(all.body.data.pagination, { page: 1, limit: 25, total: 3, total_pages: 1 })
      const row = all.body.data.certificates.find((x: { id: number }) => x.id === ids[0])
      assert.equal(row.requested, true)
      assert.equal(row.common_name, 'paging.example.net')
      assert.equal(row.domain, 'paging.example.net')
      assert.equal(row.validation_method, 'http')
      const unrequested = all.body.data.certificates.find((x: { id: number }) => x.id === ids[1])
      assert.deepEqual([unrequested.requested, unrequested.domain], [false, ''])
      assert.equal('certificate' in row, false, 'the list leaves the PEM out')

      const p2 = await t.request('GET', '/certificates?page=2&limit=2', { key: c.key })
      assert.deepEqual(
        p2.body.data.certificates.map((x: { id: number }) => x.id),
        [ids[0]],
      )
      assert.deepEqual(p2.body.data.pagination, { page: 2, limit: 2, total: 3, total_pages: 2 })
      const out = await t.request('GET', '/certificates?page=3&limit=2', { key: c.key })
      assert.deepEqual(out.body, { status: 400, status_description: 'Page out of range' })
      const badLimit = await t.request('GET', '/certificates?limit=1000', { key: c.key })
      assert.equal(badLimit.status, 400)

      const byName = await t.request('GET', '/certificates?search=PAGING.example', { key: c.key })
      assert.deepEqual(
        byName.body.data.certificates.map((x: { id: number }) => x.id),
        [ids[0]],
      )
      const byProduct = await t.request('GET', '/certificates?search=multi', { key: c.key })
      assert.deepEqual(
        byProduct.body.data.certificates.map((x: { id: number }) => x.id),
        [ids[2]],
      )
      const none = await t.request('GET', '/certificates?search=%25', { key: c.key })
      assert.deepEqual(none.body.data.certificates, [])
      assert.deepEqual(none.body.data.pagination, { page: 1, limit: 25, total: 0, total_pages: 0 })
    })

    it('keeps each account to its own certificates', async () => {
      const id = await makeCertificatePackage(t, a)
      assert.deepEqual((await get(id, b.key)).body, { status: 404, status_description: 'Certificate not found' })
      assert.deepEqual(
        (await request(id, { csr: opensslCsr('x.example.com'), validation_method: 'http' }, b.key)).body,
        { status: 404, status_description: 'Certificate not found' },
      )
      assert.deepEqual((await get(987654)).body, { status: 404, status_description: 'Certificate not found' })
      const listed = await t.request('GET', '/certificates?limit=100', { key: b.key })
      assert.equal(
        listed.body.data.certificates.some((x: { id: number }) => x.id === id),
        false,
      )
      const bad = await t.request('GET', '/certificates/abc', { key: a.key })
      assert.equal(bad.status, 400)
      assert.match(bad.body.status_description, /^Invalid id/)
    })

    it('lets a sub-user with the certificates permission in, and ordering only with the order permission', async () => {
      const allowed = await t.subUser(a, { certificates: true })
      const denied = await t.subUser(a, { domains: true, order: true })
      const id = await makeCertificatePackage(t, a)
      assert.equal((await get(id, allowed.key)).status, 200)
      assert.equal((await t.request('GET', '/certificates/products', { key: allowed.key })).status, 200)
      for (const [method, path] of [
        ['GET', '/certificates'],
        ['GET', `/certificates/${id}`],
        ['GET', '/certificates/products'],
        ['POST', '/certificates/csr'],
        ['POST', `/certificates/${id}/request`],
      ]) {
        const r = await t.request(method, path, { key: denied.key, body: {} })
        assert.deepEqual(r.body, { status: 403, status_description: 'Access denied' }, `${method} ${path}`)
      }
      const order = { product_id: 1, duration: 1 }
      assert.deepEqual((await t.request('POST', '/certificates/order', { key: allowed.key, body: order })).body, {
        status: 403,
        status_description: 'Access denied',
      })
      const ordered = await t.request('POST', '/certificates/order', { key: denied.key, body: order })
      assert.equal(ordered.status, 200)
      assert.equal(typeof ordered.body.data.order_id, 'number')
    })

    it('shows an expired certificate as EXP and refuses a request once the paid period has ended', async () => {
      const id = await makeCertificatePackage(t, a)
      const issued = await makeCertificatePackage(t, a)
      assert.equal(
        (await request(issued, { csr: opensslCsr('expiring.example.com'), validation_method: 'http' })).status,
        200,
      )
      await t.ctx.jobs.drain()
      assert.equal((await get(issued)).body.data.certificate_status, 'ACT')
      clock.advance(400 * 24 * 3600_000)
      assert.equal((await get(issued)).body.data.certificate_status, 'EXP')
      const r = await request(id, { csr: opensslCsr('late.example.com'), validation_method: 'http' })
      assert.deepEqual(r.body, { status: 400, status_description: 'The period of this certificate package has ended' })
    })
  })
})

forEachDialect((dialect) => {
  describe(`certificates demo data (${dialect})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_DEMO: '1' } })
    })
    after(() => t.close())

    it('seeds one issued certificate into the demo account', async () => {
      const key = t.server.demoKey
      assert.ok(key)
      const list = await t.request('GET', '/certificates', { key })
      assert.equal(list.status, 200)
      const issued = list.body.data.certificates.filter(
        (c: { certificate_status: string }) => c.certificate_status === 'ACT',
      )
      assert.equal(issued.length, 1)
      const c = (await t.request('GET', `/certificates/${issued[0].id}`, { key })).body.data
      assert.equal(c.requested, true)
      assert.match(
        opensslVerify((await t.ctx.drivers.ca.rootCertificate())!, c.intermediate_certificate, c.certificate),
        /OK$/,
      )
      assert.deepEqual(certificateNames(c.certificate), { cn: c.common_name, sans: c.domains })
    })
  })
})
