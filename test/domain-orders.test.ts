import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { contactProfile, makeDomain, uniqueName } from './helpers/fixtures/domains.js'

forEachDialect((dialect) => {
  describe(`extensions, availability and domain orders over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    before(async () => {
      t = await startTestApp(dialect, {
        env: { HOSTAPI_REGISTRY_TAKEN: 'taken.com=SECRET-CODE,elsewhere.nl', HOSTAPI_AVAILABILITY_RATE_LIMIT: '10' },
      })
      a = await t.account('Orders A')
      b = await t.account('Orders B')
    })
    after(() => t.close())

    const order = (body: unknown, key = a.key, headers?: Record<string, string>) =>
      t.request('POST', '/domains/order', { key, body, headers })
    const openOrder = async (orderId: number, key = a.key) =>
      (await t.request('GET', `/orders/${orderId}`, { key })).body.data

    it('lists extensions with prices as strings, paged and searchable', async () => {
      const r = await t.request('GET', '/domains/extensions/', { key: a.key })
      assert.equal(r.status, 200)
      const { extensions, pagination } = r.body.data
      assert.equal(extensions.length, 22)
      assert.deepEqual(pagination, { page: 1, limit: 25, total: 22, total_pages: 1 })
      const com = extensions.find((e: { extension: string }) => e.extension === 'com')
      assert.deepEqual(com, { extension: 'com', register_price: '9.99', renew_price: '12.99', transfer_price: '9.99' })
      const search = await t.request('GET', '/domains/extensions?search=.co', { key: a.key })
      assert.deepEqual(
        search.body.data.extensions.map((e: { extension: string }) => e.extension),
        ['co.uk', 'com'],
      )
      const page = await t.request('GET', '/domains/extensions?page=2&limit=10', { key: a.key })
      assert.equal(page.body.data.extensions.length, 10)
      assert.deepEqual(page.body.data.pagination, { page: 2, limit: 10, total: 22, total_pages: 3 })
      assert.deepEqual((await t.request('GET', '/domains/extensions?page=4&limit=10', { key: a.key })).body, {
        status: 400,
        status_description: 'Page out of range',
      })
      assert.equal((await t.request('GET', '/domains/extensions?limit=101', { key: a.key })).status, 400)
    })

    it('shows one extension written with or without the dot', async () => {
      const plain = await t.request('GET', '/domains/extensions/nl', { key: a.key })
      assert.deepEqual(plain.body.data, {
        extension: 'nl',
        register_price: '7.99',
        renew_price: '7.99',
        transfer_price: '0.00',
        min_period: 1,
        max_period: 1,
        supports_dnssec: true,
        supports_privacy: false,
        requires_auth_code: true,
        dnssec_allowed: true,
        transfer_auth_code_required: true,
      })
      const dotted = await t.request('GET', '/domains/extensions/.NL', { key: a.key })
      assert.deepEqual(dotted.body.data, plain.body.data)
      assert.deepEqual((await t.request('GET', '/domains/extensions/nope', { key: a.key })).body, {
        status: 404,
        status_description: 'Extension not found',
      })
    })

    it('checks availability: available, premium, registered with us, registered elsewhere, invalid', async () => {
      const check = async (name: string) =>
        (await t.request('GET', `/domains/availability/${name}`, { key: a.key })).body
      const free = uniqueName('free', 'com')
      assert.deepEqual(await check(free), {
        status: 200,
        status_description: 'Request successful',
        data: { domain: free, status: 'available', is_premium: false, premium_price: null },
      })
      assert.deepEqual((await check('Cloud.Shop')).data, {
        domain: 'cloud.shop',
        status: 'available',
        is_premium: true,
        premium_price: { currency: 'EUR', register: 2500, renew: 29.99 },
      })
      const mine = await makeDomain(t, b)
      assert.equal((await check(mine)).data.status, 'unavailable')
      assert.equal((await check('taken.com')).data.status, 'transfer')
      assert.equal((await check('bad_name.com')).data.status, 'invalid')
      assert.equal((await check('example.notatld')).data.status, 'invalid', 'an extension not offered')
      assert.equal((await check(`${free}.`)).data.domain, free, 'a trailing dot is allowed')
    })

    it('answers "No domain set", "empty extension" and 429 "Rate limit exceeded" per account', async () => {
      const c = await t.account('Rate limited')
      const r1 = await t.request('GET', '/domains/availability/', { key: c.key })
      assert.deepEqual(r1.body, { status: 400, status_description: 'No domain set' })
      const r2 = await t.request('GET', '/domains/availability/example', { key: c.key })
      assert.deepEqual(r2.body, { status: 400, status_description: 'Your domain request contains an empty extension' })
      const r3 = await t.request('GET', '/domains/availability/example.', { key: c.key })
      assert.deepEqual(r3.body, { status: 400, status_description: 'Your domain request contains an empty extension' })
      const r4 = await t.request('GET', '/domains/availability/%20', { key: c.key })
      assert.deepEqual(r4.body, { status: 400, status_description: 'No domain set' })
      const r5 = await t.request('GET', '/domains/availability/one.com', { key: c.key })
      assert.equal(r5.status, 200)
      assert.equal(r5.headers['ratelimit-limit'], '10')
      // Four checks of the budget of ten are used above (the 400s count too); use up the rest.
      for (let i = 0; i < 6; i++)
        assert.equal((await t.request('GET', `/domains/availability/n${i}.com`, { key: c.key })).status, 200)
      const limited = await t.request('GET', '/domains/availability/two.com', { key: c.key })
      assert.equal(limited.status, 429)
      assert.deepEqual(limited.body, { status: 429, status_description: 'Rate limit exceeded' })
      assert.ok(Number(limited.headers['retry-after']) >= 1)
      // Another key of the same account shares the budget; another account does not.
      const second = await t.ctx.services.iam.createKey(c.accountId, c.userId)
      assert.equal((await t.request('GET', '/domains/availability/three.com', { key: second.key })).status, 429)
      assert.equal((await t.request('GET', '/domains/availability/three.com', { key: b.key })).status, 200)
      // Other routes are not held back.
      assert.equal((await t.request('GET', '/domains', { key: c.key })).status, 200)
    })

    it('orders a domain: charged, processed by the job into an active domain with its zone from the template', async () => {
      const contact = (
        await t.request('POST', '/domains/contacts', {
          key: a.key,
          body: {
            ...contactProfile,
            profile: { ...contactProfile.profile, defaults: { owner: true, admin: true, tech: true, billing: true } },
          },
        })
      ).body.data
      await t.request('POST', '/domains/nameservers', {
        key: a.key,
        body: { alias: 'mine', nameservers: ['ns1.example.net', 'ns2.example.net'] },
      })
      const tpl = (
        await t.request('POST', '/domains/dns-templates', {
          key: a.key,
          body: {
            alias: 'web',
            records: [
              { type: 'A', name: '', value: '192.0.2.80' },
              { type: 'CNAME', name: 'www', value: '@' },
              { type: 'MX', name: '', value: 'mail', priority: 10 },
            ],
          },
        })
      ).body.data
      const name = uniqueName('new', 'com')
      const invoicesBefore = (await t.request('GET', '/account/invoices', { key: a.key })).body.data.pagination.total
      const r = await order({ domain: name, type: 'register', nameserver: 'mine', dns_template_id: tpl.id, period: 2 })
      assert.equal(r.status, 200, r.text)
      const orderId = r.body.data.order_id
      assert.equal(typeof orderId, 'number')
      assert.equal(
        (await t.request('GET', '/account/invoices', { key: a.key })).body.data.pagination.total,
        invoicesBefore + 1,
        'the order is charged',
      )

      const open = (await t.request('GET', '/orders', { key: a.key })).body.data.orders.find(
        (o: { order_id: number }) => o.order_id === orderId,
      )
      assert.deepEqual(
        open.services.map((s: { type: string; name: string; dns_template_id: number; errors: unknown[] }) => [
          s.type,
          s.name,
          s.dns_template_id,
          s.errors,
        ]),
        [['domain', name, tpl.id, []]],
      )
      assert.equal((await openOrder(orderId)).total_price, 9.99 + 12.99)
      assert.deepEqual(
        (await t.request('GET', `/domains/${name}`, { key: a.key })).body,
        { status: 400, status_description: 'You have no access to this resource' },
        'not a domain before the job ran',
      )

      await t.ctx.jobs.drain()
      const done = await openOrder(orderId)
      assert.equal(done.status, 'completed')
      assert.equal(done.services[0].result.domain, name)
      const d = (await t.request('GET', `/domains/${name}`, { key: a.key })).body.data
      assert.equal(d.status, 'active')
      assert.equal(d.nameserver_profile, 'mine')
      assert.equal(d.handles.owner.handle_id, contact.id)
      const today = new Date()
      assert.equal(
        d.renewal_date,
        `${today.getUTCFullYear() + 2}-${String(today.getUTCMonth() + 1).padStart(2, '0')}-${String(today.getUTCDate()).padStart(2, '0')}`,
      )
      const records = (await t.request('GET', `/domains/${name}/dns`, { key: a.key })).body.data.records
      assert.deepEqual(
        records.map((x: { type: string; name: string; value: string }) => `${x.type} ${x.name} ${x.value}`).sort(),
        [`A ${name}. 192.0.2.80`, `CNAME www.${name}. ${name}.`, `MX ${name}. 10 mail.${name}.`],
      )
      assert.equal(
        (await t.request('GET', `/domains/availability/${name}`, { key: b.key })).body.data.status,
        'unavailable',
      )
      const again = await order({ domain: name })
      assert.deepEqual(again.body, { status: 400, status_description: 'This domain is not available for registration' })
    })

    it("gives a domain ordered without a nameserver profile the account's default one", async () => {
      const c = await t.account('Defaults')
      const plain = uniqueName('plain', 'nl')
      await order({ domain: plain }, c.key)
      await t.ctx.jobs.drain()
      await t.request('POST', '/domains/nameservers', {
        key: c.key,
        body: { alias: 'house', nameservers: ['ns1.house.example', 'ns2.house.example'], set_as_default: true },
      })
      const withDefault = uniqueName('house', 'nl')
      await order({ domain: withDefault }, c.key)
      await t.ctx.jobs.drain()
      const first = (await t.request('GET', `/domains/${plain}`, { key: c.key })).body.data
      assert.equal(first.nameserver_profile, 'default-mijnhost', 'without a default of its own: the built-in profile')
      assert.equal(first.managed_dns, true)
      const second = (await t.request('GET', `/domains/${withDefault}`, { key: c.key })).body.data
      assert.equal(second.nameserver_profile, 'house')
      assert.deepEqual(second.nameservers, ['ns1.house.example', 'ns2.house.example'])
      assert.equal(second.managed_dns, false)
    })

    it('refuses a premium name without the matching accept_premium_price, and orders it with it', async () => {
      const refused = await order({ domain: 'premium.xyz' })
      assert.deepEqual(refused.body, {
        status: 400,
        status_description: 'This is a premium domain: set accept_premium_price to 499.00 to accept its register price',
      })
      const wrong = await order({ domain: 'premium.xyz', accept_premium_price: 12.99 })
      assert.equal(wrong.status, 400)
      const ok = await order({ domain: 'premium.xyz', accept_premium_price: 499 })
      assert.equal(ok.status, 200)
      assert.equal((await openOrder(ok.body.data.order_id)).total_price, 499)
      const dup = await order({ domain: 'premium.xyz', accept_premium_price: 499 })
      assert.deepEqual(dup.body, { status: 400, status_description: 'This domain is already in an open order' })
      await t.ctx.jobs.drain()
      assert.equal((await openOrder(ok.body.data.order_id)).status, 'completed')
    })

    it('leaves a transfer with a wrong code open with status error and code transfer_code, and completes it after PUT /orders', async () => {
      const r = await order({ domain: 'taken.com', type: 'transfer', transfer_code: 'WRONG' })
      assert.equal(r.status, 200, r.text)
      const orderId = r.body.data.order_id
      await t.ctx.jobs.drain()
      const list = (await t.request('GET', '/orders/', { key: a.key })).body.data.orders
      const open = list.find((o: { order_id: number }) => o.order_id === orderId)
      assert.equal(open.status, 'error')
      assert.deepEqual(open.services[0].errors, [
        { code: 'transfer_code', description: 'The transfer code is not correct' },
      ])
      assert.equal(open.services[0].dns_template_id, 0)

      const fix = await t.request('PUT', `/orders/${orderId}`, {
        key: a.key,
        body: { cart_id: open.services[0].cart_id, domain: { transfer_code: 'SECRET-CODE' } },
      })
      assert.equal(fix.status, 200)
      await t.ctx.jobs.drain()
      assert.equal((await openOrder(orderId)).status, 'completed')
      assert.equal((await t.request('GET', '/domains/taken.com', { key: a.key })).body.data.status, 'active')
    })

    it('reports a reference that vanished before processing as an order error, fixed by PUT /orders', async () => {
      const tpl = (
        await t.request('POST', '/domains/dns-templates', {
          key: a.key,
          body: { alias: 'gone', records: [{ type: 'A', name: '', value: '192.0.2.1' }] },
        })
      ).body.data
      const name = uniqueName('ref', 'com')
      const orderId = (await order({ domain: name, dns_template_id: tpl.id })).body.data.order_id
      await t.request('DELETE', `/domains/dns-templates/${tpl.id}`, { key: a.key })
      await t.ctx.jobs.drain()
      const failed = await openOrder(orderId)
      assert.equal(failed.status, 'error')
      assert.deepEqual(failed.services[0].errors, [{ code: 'dns_template', description: 'DNS template not found' }])
      assert.equal(
        (await t.request('GET', `/domains/availability/${name}`, { key: b.key })).body.data.status,
        'available',
        'nothing was registered',
      )
      const fixed = await t.request('PUT', `/orders/${orderId}`, {
        key: a.key,
        body: { cart_id: failed.services[0].cart_id, domain: { dns_template_id: 0 } },
      })
      assert.equal(fixed.body.data.services[0].dns_template_id, 0)
      await t.ctx.jobs.drain()
      assert.equal((await openOrder(orderId)).status, 'completed')
      assert.deepEqual((await t.request('GET', `/domains/${name}/dns`, { key: a.key })).body.data.records, [])
    })

    it('validates an order before charging it', async () => {
      const cases: [unknown, number, string][] = [
        [{ domain: 'not a domain' }, 400, 'Invalid domain name'],
        [{ domain: 'example.notatld' }, 400, 'The extension .notatld is not offered'],
        [
          { domain: uniqueName('x', 'com'), type: 'transfer' },
          400,
          'This domain is not registered elsewhere; order it with type register',
        ],
        [{ domain: 'elsewhere.nl' }, 400, 'This domain is not available for registration'],
        [{ domain: uniqueName('x', 'com'), nameserver: 'nope' }, 404, 'Nameservers name not found'],
        [{ domain: uniqueName('x', 'com'), dns_template_id: 999999 }, 404, 'DNS template not found'],
        [{ domain: uniqueName('x', 'com'), profile: { owner: 999999 } }, 404, 'Contact profile not found'],
        [{ domain: uniqueName('x', 'nl'), period: 2 }, 400, 'Invalid period: .nl can be registered for 1 to 1 years'],
        [{ type: 'register' }, 400, 'Missing domain'],
        [{ domain: uniqueName('x', 'com'), type: 'renew' }, 400, ''],
      ]
      for (const [body, status, text] of cases) {
        const r = await order(body)
        assert.equal(r.status, status, JSON.stringify(body))
        if (text) assert.equal(r.body.status_description, text, JSON.stringify(body))
      }
    })

    it('answers a repeated order with the same Idempotency-Key with the first order', async () => {
      const body = { domain: uniqueName('idem', 'com') }
      const headers = { 'idempotency-key': `k-${Date.now()}` }
      const first = await order(body, a.key, headers)
      const second = await order(body, a.key, headers)
      assert.equal(first.status, 200)
      assert.deepEqual(second.body, first.body)
      const other = await order({ domain: uniqueName('idem', 'com') }, a.key, headers)
      assert.equal(other.status, 409)
    })

    it('needs the order permission to order, and the domains permission to check availability', async () => {
      const domainsOnly = await t.subUser(a, { domains: true })
      assert.deepEqual((await order({ domain: uniqueName('p', 'com') }, domainsOnly.key)).body, {
        status: 403,
        status_description: 'Access denied',
      })
      assert.equal((await t.request('GET', '/domains/availability/x.com', { key: domainsOnly.key })).status, 200)
      const orderOnly = await t.subUser(a, { order: true })
      assert.equal((await order({ domain: uniqueName('p', 'com') }, orderOnly.key)).status, 200)
    })
  })
})
