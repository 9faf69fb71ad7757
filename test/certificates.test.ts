import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { csrNames, keyMatches, openssl } from './helpers/pki.js'

const csrBody = (common_name: string, extra: Record<string, unknown> = {}) => ({
  common_name,
  organization: 'Example B.V.',
  email: 'admin@example.com',
  country: 'NL',
  state: 'Noord-Holland',
  locality: 'Amsterdam',
  ...extra,
})

// Certificate products, orders and CSRs made by the API; issuance: certificates-issue, listing: certificates-list.
forEachDialect((dialect) => {
  describe(`certificates over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    const clock = new ManualClock()
    before(async () => {
      t = await startTestApp(dialect, { clock })
      a = await t.account('Certificates A')
    })
    after(() => t.close())

    const get = (id: number, key = a.key) => t.request('GET', `/certificates/${id}`, { key })

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
  })
})
