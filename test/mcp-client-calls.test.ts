import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { mcpClient } from './helpers/mcp-client.js'

// Every call the MCP server for this API (vitrionbv/mijn-host-mcp, 77 tools) can make, made as its HTTP client makes
// it: JSON bodies, the headers API-Key, Accept, Content-Type: application/json (also on calls without a body, where
// fetch sends `content-length: 0` for POST and PUT and nothing for the others) and User-Agent, query strings built
// from the defined values only, on the demo data a new user meets. A tool is called once plainly and once more for
// each alternative input its schema or description names (an id as number or string, an enum's other value, an
// optional group that changes the request): 119 calls of 77 tools. Two inputs the descriptions say are refused are
// among them, and answer as the API does; the test's own reads between the calls are not counted.

forEachDialect((dialect) => {
  describe(`the MCP client's calls (${dialect})`, () => {
    let t: TestApp
    let key: string
    const clock = new ManualClock()
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_DEMO: '1' }, clock })
      key = t.server.demoKey!
    })
    after(() => t.close())

    const { ok, refused, calls } = mcpClient(
      () => t,
      () => key,
    )
    const drain = () => t.ctx.jobs.drain()

    it('answers every call of the client', async (ctx) => {
      // Tools
      const me = await ok('get-whoami', 'GET', '/whoami')
      assert.equal(typeof me.customer_number, 'number')

      // Domains
      await ok('list-domains', 'GET', '/domains', { query: { tags: undefined } })
      await ok('list-domains [tags]', 'GET', '/domains', { query: { tags: 'web,mail' } })
      await ok('get-domain', 'GET', '/domains/demo-shop.nl')
      await ok('update-domain [nameserver]', 'PUT', '/domains/demo-blog.com', { body: { nameserver: 'demo-external' } })
      await ok('update-domain [nameservers]', 'PUT', '/domains/demo-blog.com', {
        body: { nameservers: ['ns1.demo-dns.example', 'ns2.demo-dns.example'] },
      })
      await ok('update-domain [nameservers with glue]', 'PUT', '/domains/demo-blog.com', {
        body: {
          nameservers: [
            { hostname: 'ns1.demo-blog.com', ipv4: '192.0.2.10' },
            { hostname: 'ns2.demo-blog.com', ipv4: '192.0.2.11', ipv6: '2001:db8::11' },
          ],
        },
      })
      await ok('update-domain [nameserver default-mijnhost]', 'PUT', '/domains/demo-blog.com', {
        body: { nameserver: 'default-mijnhost' },
      })
      await ok('update-domain [is_locked]', 'PUT', '/domains/demo-shop.nl', { body: { is_locked: false } })
      await ok('update-domain [dnssec on]', 'PUT', '/domains/demo-shop.nl', {
        body: {
          dnssec: {
            enabled: true,
            flags: 257,
            alg: 13,
            protocol: 3,
            pubKey: 'mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
          },
        },
      })
      await ok('update-domain [dnssec off]', 'PUT', '/domains/demo-shop.nl', { body: { dnssec: { enabled: false } } })
      await ok('update-domain [profile]', 'PUT', '/domains/demo-shop.nl', {
        body: { profile: { owner: 1, admin: 1, tech: 1, billing: 1 } },
      })
      await ok('update-domain [forwarder on]', 'PUT', '/domains/demo-mail.eu', {
        body: { forwarder: { enabled: true, type: 301, url: 'https://www.demo-shop.nl/' } },
      })
      await ok('update-domain [forwarder off]', 'PUT', '/domains/demo-mail.eu', {
        body: { forwarder: { enabled: false } },
      })
      await ok('update-domain [tags]', 'PUT', '/domains/demo-mail.eu', { body: { tags: ['mail', 'project1'] } })
      await ok('update-domain [tags cleared]', 'PUT', '/domains/demo-mail.eu', { body: { tags: [] } })
      const auth = await ok('get-auth-code', 'GET', '/domains/demo-shop.nl/auth-code')
      assert.equal(typeof auth.auth_code, 'string')
      await ok('cancel-domain', 'DELETE', '/domains/demo-mail.eu')
      await ok('cancel-domain-deletion', 'PUT', '/domains/demo-mail.eu/cancel-delete')
      await ok('check-domain-availability', 'GET', '/domains/availability/demo-new-shop.nl')
      const premium = await ok('check-domain-availability [premium]', 'GET', '/domains/availability/premium.xyz')
      assert.equal(premium.is_premium, true)
      assert.equal(typeof premium.premium_price.register, 'number')
      await ok('check-domain-availability [taken]', 'GET', '/domains/availability/example.com')

      // DNS
      await ok('list-dns-records', 'GET', '/domains/demo-blog.com/dns')
      await ok('replace-dns-records', 'PUT', '/domains/demo-blog.com/dns', {
        body: {
          records: [
            { type: 'A', name: 'demo-blog.com.', value: '192.0.2.80', ttl: 3600 },
            { type: 'A', name: 'www.demo-blog.com.', value: '192.0.2.80', ttl: 3600 },
            { type: 'MX', name: 'demo-blog.com.', value: '10 mail.demo-blog.com.', ttl: 3600 },
          ],
        },
      })
      await ok('update-dns-record', 'PATCH', '/domains/demo-blog.com/dns', {
        body: { record: { type: 'TXT', name: '_acme-challenge.demo-blog.com.', value: 'token-1', ttl: 300 } },
      })
      await ok('update-dns-record [MX]', 'PATCH', '/domains/demo-blog.com/dns', {
        body: { record: { type: 'MX', name: 'demo-blog.com.', value: '20 mx2.demo-blog.com.', ttl: 3600 } },
      })
      await ok('delete-dns-record', 'DELETE', '/domains/demo-blog.com/dns', {
        body: { record: { type: 'TXT', name: '_acme-challenge.demo-blog.com.', value: 'token-1' } },
      })
      const zone = await ok('get-dns-zonefile', 'GET', '/domains/demo-blog.com/dns/zone')
      assert.match(zone.zone, /\$ORIGIN demo-blog\.com\./)
      await ok('import-dns-zonefile', 'PUT', '/domains/demo-blog.com/dns/zone', {
        body: { zone: '$ORIGIN demo-blog.com.\n$TTL 3600\n@ IN A 192.0.2.81\nwww IN CNAME demo-blog.com.\n' },
      })

      // Contact profiles
      await ok('list-contact-profiles', 'GET', '/domains/contacts')
      const person = {
        firstname: 'Jan',
        lastname: 'Jansen',
        street: 'Kerkstraat',
        street_number: '1',
        zipcode: '1017 GA',
        city: 'Amsterdam',
        country: 'NL',
        email: 'jan@example.com',
        phone_country: '+31',
        phone_area: '6',
        phone_number: '12345678',
        defaults: { owner: false, admin: false, tech: false, billing: false },
      }
      const contact = await ok('create-contact-profile', 'POST', '/domains/contacts', {
        body: { name: 'Jan Jansen', profile: person },
      })
      const full = await ok('create-contact-profile [all fields]', 'POST', '/domains/contacts', {
        body: {
          name: 'Jansen B.V.',
          profile: {
            ...person,
            company_name: 'Jansen B.V.',
            vat: 'NL123456789B01',
            street_suffix: 'A',
            state: 'Noord-Holland',
            defaults: { owner: false, admin: false, tech: false, billing: false, reseller: false },
            social_security_number: '123456782',
            passport_number: 'NX1234567',
            company_registration_number: '12345678',
            company_url: 'https://jansen.example',
            birth_date: '1980-01-31',
          },
        },
      })
      await ok('get-contact-profile', 'GET', `/domains/contacts/${contact.id}`)
      await ok('update-contact-profile [name]', 'PUT', `/domains/contacts/${contact.id}`, {
        body: { name: 'Jan J.' },
      })
      await ok('update-contact-profile [profile]', 'PUT', `/domains/contacts/${contact.id}`, {
        body: { profile: { city: 'Utrecht', zipcode: '3511 AA', phone_area: '30', phone_number: '1234567' } },
      })
      await ok('delete-contact-profile', 'DELETE', `/domains/contacts/${full.id}`)
      // "Fails if it is still attached to domains": the demo profile holds every demo domain's handles.
      await refused(
        400,
        'The contact profile is in use by a domain and cannot be deleted',
        'delete-contact-profile [in use]',
        'DELETE',
        '/domains/contacts/1',
      )

      // Nameserver profiles
      await ok('list-nameserver-profiles', 'GET', '/domains/nameservers')
      const hosts = [
        { hostname: 'ns1.demo-blog.com', ipv4: '192.0.2.10' },
        { hostname: 'ns2.demo-blog.com', ipv4: '192.0.2.11', ipv6: '2001:db8::11' },
      ]
      await ok('create-nameserver-profile', 'POST', '/domains/nameservers', {
        body: { alias: 'own-ns', nameservers: hosts },
      })
      await ok('create-nameserver-profile [set_as_default]', 'POST', '/domains/nameservers', {
        body: { alias: 'own-ns-default', nameservers: hosts, set_as_default: true },
      })
      await ok('get-nameserver-profile', 'GET', '/domains/nameservers/own-ns')
      await ok('update-nameserver-profile', 'PUT', '/domains/nameservers/own-ns', {
        body: { nameservers: [...hosts, { hostname: 'ns3.demo-dns.example', ipv4: '192.0.2.12' }] },
      })
      await ok('update-nameserver-profile [set_as_default]', 'PUT', '/domains/nameservers/own-ns', {
        body: { set_as_default: true },
      })
      await ok('delete-nameserver-profile', 'DELETE', '/domains/nameservers/own-ns-default')

      // DNS templates
      await ok('list-dns-templates', 'GET', '/domains/dns-templates')
      const template = await ok('create-dns-template', 'POST', '/domains/dns-templates', {
        body: {
          alias: 'Mail only',
          default: false,
          records: [
            { type: 'MX', name: '', value: 'mail.example.net.', ttl: 3600, priority: 10 },
            { type: 'TXT', value: 'v=spf1 mx -all' },
          ],
        },
      })
      await ok('get-dns-template', 'GET', `/domains/dns-templates/${template.id}`)
      await ok('update-dns-template [alias]', 'PUT', `/domains/dns-templates/${template.id}`, {
        body: { alias: 'Mail' },
      })
      await ok('update-dns-template [records]', 'PUT', `/domains/dns-templates/${template.id}`, {
        body: { default: false, records: [{ type: 'A', name: 'www', value: '192.0.2.7', ttl: 600 }] },
      })

      // Extensions
      await ok('list-domain-extensions', 'GET', '/domains/extensions/', { query: {} })
      await ok('list-domain-extensions [paged]', 'GET', '/domains/extensions/', {
        query: { page: 1, limit: 5, search: 'n' },
      })
      const nl = await ok('get-domain-extension', 'GET', '/domains/extensions/nl')
      assert.deepEqual([nl.extension, nl.transfer_auth_code_required, nl.dnssec_allowed], ['nl', true, true])
      await ok('get-domain-extension [.com]', 'GET', '/domains/extensions/.com')

      // Orders
      const registered = await ok('create-order [register]', 'POST', '/domains/order', {
        body: { domain: 'mcp-client-new.nl', type: 'register', nameserver: 'default-mijnhost', dns_template_id: 1 },
      })
      await ok('create-order [premium]', 'POST', '/domains/order', {
        body: {
          domain: 'premium.xyz',
          type: 'register',
          accept_premium_price: premium.premium_price.register,
          profile: { owner: contact.id, admin: contact.id, tech: contact.id, billing: contact.id },
        },
      })
      await ok('create-order [transfer]', 'POST', '/domains/order', {
        body: { domain: 'example.net', type: 'transfer', transfer_code: 'WRONG-CODE' },
      })
      // "Check check-domain-availability first": a name registered with us cannot be ordered.
      await refused(
        400,
        'This domain is not available for registration',
        'create-order [taken]',
        'POST',
        '/domains/order',
        {
          body: { domain: 'demo-shop.nl', type: 'register' },
        },
      )
      await drain()
      const orders = await ok('list-orders', 'GET', '/orders/')
      await ok('get-order', 'GET', `/orders/${registered.order_id}`)
      const failed = orders.orders.find((o: { status: string }) => o.status === 'error')
      await ok('update-order [domain]', 'PUT', `/orders/${failed.order_id}`, {
        body: { cart_id: failed.services[0].cart_id, domain: { transfer_code: 'DEMO-TRANSFER-CODE' } },
      })
      // The item is a domain: its hosting part is not used, the order is processed again.
      await ok('update-order [hosting]', 'PUT', `/orders/${failed.order_id}`, {
        body: { cart_id: failed.services[0].cart_id, hosting: { domain: 'demo-shop.nl' } },
      })
      await ok('delete-dns-template', 'DELETE', `/domains/dns-templates/${template.id}`)

      // VPS
      const vpsList = await ok('list-vps', 'GET', '/vps')
      const [web, db] = vpsList.vps.map((v: { id: number }) => v.id)
      await ok('get-vps', 'GET', `/vps/${web}`)
      await ok('update-vps', 'PUT', `/vps/${web}`, {
        body: { 'ip-addresses': [{ ip: '198.18.0.1', reverse: 'www.demo-shop.nl' }] },
      })
      await ok('start-vps', 'POST', `/vps/${db}/start`)
      await drain()
      await ok('restart-vps', 'POST', `/vps/${db}/restart`)
      await drain()
      await ok('stop-vps', 'POST', `/vps/${db}/stop`)
      await drain()
      const reset = await ok('reset-vps-password', 'POST', `/vps/${web}/reset-password`)
      assert.equal(typeof reset.root_password, 'string')
      await drain()
      await ok('poweroff-vps', 'POST', `/vps/${web}/poweroff`)
      await drain()
      await ok('change-vps-hostname', 'PUT', `/vps/${web}/hostname`, { body: { hostname: 'web2.demo.example' } })
      await drain()
      const rescue = await ok('update-vps-rescue [enable]', 'PUT', `/vps/${web}/rescue`, { body: { enable: true } })
      assert.equal(typeof rescue.rescue_password, 'string')
      await drain()
      await ok('update-vps-rescue [disable]', 'PUT', `/vps/${web}/rescue`, { body: { enable: false } })
      await drain()
      const images = await ok('list-vps-images', 'GET', '/vps/images')
      const reinstalled = await ok('reinstall-vps', 'POST', `/vps/${web}/reinstall`, {
        body: { image_id: images.images[0].id },
      })
      assert.equal(typeof reinstalled.root_password, 'string')
      await drain()
      await ok('reinstall-vps [image_id as string]', 'POST', `/vps/${web}/reinstall`, {
        body: { image_id: String(images.images[1].id) },
      })
      await drain()
      // Two days on, the nightly (automated, incremental) backups are there beside the manual one.
      clock.advance(2 * 86_400_000)
      const backups = await ok('list-vps-backups', 'GET', `/vps/${web}/backups`)
      const keyOf = (type: string) => backups.backups.find((b: { type: string }) => b.type === type).key
      await ok('create-vps-backup', 'POST', `/vps/${web}/backups`)
      await drain()
      const busy = await ok('get-vps', 'GET', `/vps/${web}`, { record: false })
      assert.deepEqual([busy.vps_locked, busy.tasks], [false, []], 'the backup task is done')
      await ok('restore-vps-backup', 'PATCH', `/vps/${web}/backups`, { body: { key: keyOf('manual') } })
      await drain()
      await ok('restore-vps-backup [incremental]', 'PATCH', `/vps/${web}/backups`, {
        body: { key: keyOf('incremental'), type: 'incremental' },
      })
      await drain()
      await ok('cancel-vps', 'DELETE', `/vps/${db}`)
      await ok('cancel-vps-deletion', 'PUT', `/vps/${db}/cancel-delete`)

      // Certificates
      await ok('list-certificates', 'GET', '/certificates/', { query: {} })
      await ok('list-certificates [paged]', 'GET', '/certificates/', { query: { page: 1, limit: 10 } })
      await ok('get-certificate', 'GET', '/certificates/1')
      const products = await ok('list-certificate-packages', 'GET', '/certificates/products')
      const product = products.products[0]
      await ok('order-certificate', 'POST', '/certificates/order', {
        body: { product_id: product.product_id, duration: product.duration_options[0] },
      })
      await ok('order-certificate [strings]', 'POST', '/certificates/order', {
        body: { product_id: String(product.product_id), duration: '1' },
      })
      await ok('order-certificate [no duration]', 'POST', '/certificates/order', {
        body: { product_id: product.product_id },
      })
      await drain()
      // "Unrequested packages have requested=false and an empty domain": the packages just bought.
      const listed = await ok('list-certificates', 'GET', '/certificates/', { query: {}, record: false })
      const [bought, boughtToo] = listed.certificates.filter(
        (c: { requested: boolean; domain: string }) => !c.requested && c.domain === '',
      )
      const csrInput = {
        common_name: 'shop.demo-shop.nl',
        organization: 'Demo B.V.',
        email: 'admin@demo-shop.nl',
        country: 'NL',
        state: 'Noord-Holland',
        locality: 'Amsterdam',
      }
      const csr = await ok('generate-csr', 'POST', '/certificates/csr', { body: csrInput })
      await ok('generate-csr [unit, bits]', 'POST', '/certificates/csr', {
        body: { ...csrInput, unit: 'IT', bits: 3072 },
      })
      await ok('request-certificate', 'POST', `/certificates/${bought.id}/request`, {
        body: {
          profile_id: 1,
          csr: csr.csr,
          validation_method: 'dns',
          approver_email: 'admin@demo-shop.nl',
          private_key: csr.private_key,
        },
      })
      const requested = await ok(
        'request-certificate [auto_setup_dns]',
        'POST',
        `/certificates/${boughtToo.id}/request`,
        {
          body: {
            profile_id: 1,
            csr: csr.csr,
            validation_method: 'dns',
            approver_email: 'admin@demo-shop.nl',
            auto_setup_dns: true,
          },
        },
      )
      assert.equal(requested.warning, null, 'demo-shop.nl is hosted here: the validation record is written')
      await drain()
      const issued = await ok('get-certificate', 'GET', `/certificates/${boughtToo.id}`, { record: false })
      assert.equal(issued.certificate_status, 'ACT')
      assert.match(issued.certificate, /^-----BEGIN CERTIFICATE-----/)
      assert.match(issued.intermediate_certificate, /^-----BEGIN CERTIFICATE-----/)
      assert.equal(issued.domain, 'shop.demo-shop.nl')

      // Account
      const profile = await ok('get-account-profile', 'GET', '/account/profile/')
      const { company: _c, account_type: _t, pending_email: _p, ...writable } = profile
      await ok('update-account-profile', 'PUT', '/account/profile/', {
        body: { ...writable, phone: '612345678', phone_country_code: '31' },
      })
      await ok('update-account-profile [international phone]', 'PUT', '/account/profile/', {
        body: { ...writable, phone: '+31612345678', phone_country_code: undefined, company_vat_number: null },
      })
      const pm = await ok('list-payment-methods', 'GET', '/account/paymethods/')
      await ok('update-default-payment-method', 'PUT', '/account/paymethods/', {
        body: { default_paymethod_id: pm.paymethods[0].id },
      })
      await ok('update-default-payment-method [bank_transfer]', 'PUT', '/account/paymethods/', {
        body: { paymethod: 'bank_transfer' },
      })
      const invoices = await ok('list-invoices', 'GET', '/account/invoices/', { query: {} })
      await ok('list-invoices [search]', 'GET', '/account/invoices/', { query: { page: 1, limit: 10, search: '2026' } })
      const invoice = invoices.invoices.at(-1)
      await ok('get-invoice', 'GET', `/account/invoices/${invoice.id}`)
      await ok('get-invoice [display number]', 'GET', `/account/invoices/${encodeURIComponent(invoice.invoice_nr)}`)
      await ok('download-invoice-pdf', 'GET', `/account/invoices/${invoice.id}/pdf`, { accept: 'application/pdf' })
      await ok('list-account-users', 'GET', '/account/users/', { query: {} })
      await ok('list-account-users [search]', 'GET', '/account/users/', { query: { search: 'example.com' } })
      const user = await ok('create-account-user', 'POST', '/account/users/', {
        body: {
          email: 'helpdesk@example.com',
          firstname: 'Help',
          lastname: 'Desk',
          password: 'correct horse battery staple',
          permissions: { domains: true, 'account-tickets': true },
        },
      })
      await ok('get-account-user', 'GET', `/account/users/${user.id}`)
      await ok('update-account-user [names]', 'PUT', `/account/users/${user.id}`, {
        body: { firstname: 'Helpdesk' },
      })
      await ok('update-account-user [permissions]', 'PUT', `/account/users/${user.id}`, {
        body: { permissions: { domains: true, vps: true } },
      })
      const tickets = await ok('list-support-tickets', 'GET', '/account/tickets/', { query: {} })
      await ok('list-support-tickets [search]', 'GET', '/account/tickets/', { query: { search: '10000' } })
      await ok('get-support-ticket', 'GET', `/account/tickets/${tickets.tickets[0].ticket_number}`)
      const ticket = await ok('create-support-ticket', 'POST', '/account/tickets/', {
        body: {
          subject: 'Reverse DNS',
          message: '<p>Please check the PTR of 198.18.0.1.</p>',
          department: 'support',
          product_type: 'vps',
          product_name: 'web1',
          product_link: 'https://example.com/vps/1',
        },
      })
      await ok('reply-to-support-ticket', 'POST', `/account/tickets/${ticket.ticket_number}/reply`, {
        body: { message: 'It is web2.demo.example now.' },
      })

      // Affiliate
      const commissions = await ok('list-affiliate-commissions', 'GET', '/affiliate/commissions/', { query: {} })
      await ok('get-affiliate-commission', 'GET', `/affiliate/commissions/${commissions.commissions[0].id}`)
      const payments = await ok('list-affiliate-payments', 'GET', '/affiliate/payments/', { query: {} })
      assert.ok('invoice_nr' in payments.payments[0])
      await ok('get-affiliate-payment', 'GET', `/affiliate/payments/${payments.payments[0].id}`)

      const answered = calls.filter((c) => c.status === 200).length
      ctx.diagnostic(`${answered} of ${calls.length} calls answer 200`)
      assert.deepEqual(
        calls.filter((c) => c.status !== 200).map((c) => c.name),
        ['delete-contact-profile [in use]', 'create-order [taken]'],
      )
      if (process.env.PROBE)
        for (const c of calls.filter((c) => c.status !== 200)) console.log('NOT 200', c.name, c.status, c.text)
    })
  })
})
