import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { contactProfile, makeDomain } from './helpers/fixtures/domains.js'

forEachDialect((dialect) => {
  describe(`contact profiles, nameserver profiles and DNS templates over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    before(async () => {
      t = await startTestApp(dialect, {
        env: { HOSTAPI_DEFAULT_NAMESERVERS: 'ns1.provider.test,ns2.provider.test,ns3.provider.test' },
      })
      a = await t.account('Profiles A')
      b = await t.account('Profiles B')
    })
    after(() => t.close())

    it('creates, lists, gets, updates and deletes contact profiles', async () => {
      const created = await t.request('POST', '/domains/contacts', {
        key: a.key,
        body: { ...contactProfile, profile: { ...contactProfile.profile, defaults: { owner: true } } },
      })
      assert.equal(created.status, 200)
      const c = created.body.data
      assert.equal(c.name, 'Jan Jansen')
      assert.equal(c.profile.country, 'NL', 'country in upper case')
      assert.deepEqual(c.profile.defaults, { owner: true, admin: false, tech: false, billing: false })
      const second = (
        await t.request('POST', '/domains/contacts/', {
          key: a.key,
          body: {
            profile: {
              ...contactProfile.profile,
              firstname: 'Els',
              company_name: 'Els B.V.',
              defaults: { owner: true, tech: true },
            },
          },
        })
      ).body.data
      assert.equal(second.name, 'Els Jansen', 'the default name is first and last name')
      // Taking the owner default moves it.
      const first = (await t.request('GET', `/domains/contacts/${c.id}`, { key: a.key })).body.data
      assert.equal(first.profile.defaults.owner, false)
      const list = await t.request('GET', '/domains/contacts', { key: a.key })
      assert.deepEqual(
        list.body.data.contacts.map((x: { id: number }) => x.id),
        [c.id, second.id],
      )
      assert.deepEqual((await t.request('GET', '/domains/contacts', { key: b.key })).body.data.contacts, [])

      const upd = await t.request('PUT', `/domains/contacts/${c.id}`, {
        key: a.key,
        body: { profile: { city: 'Utrecht' } },
      })
      assert.equal(upd.body.data.profile.city, 'Utrecht')
      assert.equal(upd.body.data.profile.street, 'Keizersgracht', 'other fields stay')

      const missing = await t.request('POST', '/domains/contacts', {
        key: a.key,
        body: { profile: { firstname: 'X' } },
      })
      assert.deepEqual(missing.body.status_description, 'Missing profile.lastname')
      const badCountry = await t.request('POST', '/domains/contacts', {
        key: a.key,
        body: { profile: { ...contactProfile.profile, country: 'NLD' } },
      })
      assert.equal(badCountry.status, 400)
      assert.match(badCountry.body.status_description, /^Invalid profile\.country/)
      const badPhone = await t.request('POST', '/domains/contacts', {
        key: a.key,
        body: { profile: { ...contactProfile.profile, phone_country: '31' } },
      })
      assert.match(badPhone.body.status_description, /^Invalid profile\.phone_country/)

      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', {}],
        ['DELETE', undefined],
      ] as const) {
        const other = await t.request(method, `/domains/contacts/${c.id}`, { key: b.key, body })
        assert.deepEqual(other.body, { status: 404, status_description: 'Contact profile not found' }, method)
      }
      assert.deepEqual((await t.request('DELETE', `/domains/contacts/${c.id}`, { key: a.key })).body, {
        status: 200,
        status_description: 'Contact profile deleted',
      })
      assert.deepEqual((await t.request('GET', `/domains/contacts/${c.id}`, { key: a.key })).body, {
        status: 404,
        status_description: 'Contact profile not found',
      })
    })

    it('lists the built-in nameserver profile from the configuration, read-only', async () => {
      const list = await t.request('GET', '/domains/nameservers', { key: a.key })
      assert.deepEqual(list.body.data.profiles, [
        {
          alias: 'default-mijnhost',
          nameservers: ['ns1.provider.test', 'ns2.provider.test', 'ns3.provider.test'].map((hostname) => ({
            hostname,
            ipv4: '',
            ipv6: '',
          })),
          default: 1,
          readonly: 1,
        },
      ])
      const one = await t.request('GET', '/domains/nameservers/default-mijnhost', { key: a.key })
      assert.equal(one.body.data.alias, 'default-mijnhost')
      assert.deepEqual(Object.keys(one.body.data), ['alias', 'nameservers'])
      const change = await t.request('PUT', '/domains/nameservers/default-mijnhost', {
        key: a.key,
        body: { nameservers: ['ns1.x.nl', 'ns2.x.nl'] },
      })
      assert.deepEqual(change.body, {
        status: 400,
        status_description: 'The built-in nameserver profile cannot be changed or deleted',
      })
      const del = await t.request('DELETE', '/domains/nameservers/default-mijnhost', { key: a.key })
      assert.deepEqual(del.body, {
        status: 400,
        status_description: 'The built-in nameserver profile cannot be changed or deleted',
      })
      const taken = await t.request('POST', '/domains/nameservers', {
        key: a.key,
        body: { alias: 'default-mijnhost', nameservers: ['ns1.x.nl', 'ns2.x.nl'] },
      })
      assert.deepEqual(taken.body, {
        status: 400,
        status_description: 'A nameserver profile with this alias exists already',
      })
    })

    it("answers the specification's errors for a blank and an unknown alias", async () => {
      assert.deepEqual((await t.request('GET', '/domains/nameservers/%20', { key: a.key })).body, {
        status: 400,
        status_description: 'No nameserver alias set',
      })
      assert.deepEqual((await t.request('GET', '/domains/nameservers/nope', { key: a.key })).body, {
        status: 404,
        status_description: 'Nameservers name not found',
      })
    })

    it('creates, updates and deletes nameserver profiles; domains using one follow its changes', async () => {
      const body = {
        alias: 'My-NS',
        nameservers: [{ hostname: 'ns1.example.net', ipv4: '192.0.2.53' }, 'ns2.example.net'],
        set_as_default: true,
      }
      const created = await t.request('POST', '/domains/nameservers', { key: a.key, body })
      assert.deepEqual(created.body.data, {
        alias: 'my-ns',
        nameservers: [
          { hostname: 'ns1.example.net', ipv4: '192.0.2.53', ipv6: '' },
          { hostname: 'ns2.example.net', ipv4: '', ipv6: '' },
        ],
      })
      const dup = await t.request('POST', '/domains/nameservers', { key: a.key, body })
      assert.deepEqual(dup.body, {
        status: 400,
        status_description: 'A nameserver profile with this alias exists already',
      })
      assert.equal(
        (await t.request('POST', '/domains/nameservers', { key: b.key, body })).status,
        200,
        'aliases are per account',
      )
      const list = (await t.request('GET', '/domains/nameservers', { key: a.key })).body.data.profiles
      assert.deepEqual(
        list.map((p: { alias: string; default: number }) => [p.alias, p.default]),
        [
          ['default-mijnhost', 0],
          ['my-ns', 1],
        ],
      )

      for (const nameservers of [['ns1.example.net'], Array.from({ length: 14 }, (_, i) => `ns${i}.example.net`)]) {
        const r = await t.request('POST', '/domains/nameservers', { key: a.key, body: { alias: 'count', nameservers } })
        assert.equal(r.status, 400)
      }
      const badIp = await t.request('POST', '/domains/nameservers', {
        key: a.key,
        body: { alias: 'ip', nameservers: [{ hostname: 'ns1.example.net', ipv4: '999.1.1.1' }, 'ns2.example.net'] },
      })
      assert.deepEqual(badIp.body, {
        status: 400,
        status_description: 'Invalid nameserver hostname: ns1.example.net (ipv4 999.1.1.1)',
      })
      const badAlias = await t.request('POST', '/domains/nameservers', {
        key: a.key,
        body: { alias: 'has space', nameservers: ['ns1.x.nl', 'ns2.x.nl'] },
      })
      assert.deepEqual(badAlias.body, {
        status: 400,
        status_description: 'Invalid alias: use 1 to 64 characters of a-z, 0-9, dot, underscore and dash',
      })

      const domain = await makeDomain(t, a)
      await t.request('PUT', `/domains/${domain}`, { key: a.key, body: { nameserver: 'my-ns' } })
      const upd = await t.request('PUT', '/domains/nameservers/my-ns', {
        key: a.key,
        body: { alias: 'renamed', nameservers: ['ns7.example.net', 'ns8.example.net'] },
      })
      assert.equal(upd.body.data.alias, 'renamed')
      const d = (await t.request('GET', `/domains/${domain}`, { key: a.key })).body.data
      assert.equal(d.nameserver_profile, 'renamed')
      assert.deepEqual(d.nameservers, ['ns7.example.net', 'ns8.example.net'])
      assert.deepEqual((await t.request('GET', '/domains/nameservers/my-ns', { key: a.key })).body, {
        status: 404,
        status_description: 'Nameservers name not found',
      })

      assert.deepEqual((await t.request('DELETE', '/domains/nameservers/renamed', { key: b.key })).body, {
        status: 404,
        status_description: 'Nameservers name not found',
      })
      assert.deepEqual((await t.request('DELETE', '/domains/nameservers/renamed', { key: a.key })).body, {
        status: 200,
        status_description: 'Nameserver profile deleted',
      })
      const after = (await t.request('GET', `/domains/${domain}`, { key: a.key })).body.data
      assert.equal(after.nameserver_profile, null)
      assert.equal(after.nameservers[0], 'ns7.example.net', 'the domain keeps its nameservers')
    })

    it('creates, lists, gets, updates and deletes DNS templates', async () => {
      const body = {
        alias: 'Web + mail',
        default: true,
        records: [
          { type: 'A', name: '', value: '192.0.2.10' },
          { type: 'CNAME', name: 'www', value: '@', ttl: 600 },
          { type: 'MX', name: '@', value: 'mail.example.net.', priority: 10 },
        ],
      }
      const created = await t.request('POST', '/domains/dns-templates', { key: a.key, body })
      assert.equal(created.status, 200)
      const tpl = created.body.data
      assert.deepEqual(tpl.records, [
        { type: 'A', name: '', value: '192.0.2.10', ttl: 3600 },
        { type: 'CNAME', name: 'www', value: '@', ttl: 600 },
        { type: 'MX', name: '', value: '10 mail.example.net.', ttl: 3600 },
      ])
      assert.equal(tpl.default, 1)
      const second = (
        await t.request('POST', '/domains/dns-templates', {
          key: a.key,
          body: { alias: 'Other', default: 1, records: [] },
        })
      ).body.data
      const list = await t.request('GET', '/domains/dns-templates', { key: a.key })
      assert.deepEqual(list.body.data.templates, [
        { id: tpl.id, alias: 'Web + mail', default: 0 },
        { id: second.id, alias: 'Other', default: 1 },
      ])

      const bad = await t.request('POST', '/domains/dns-templates', {
        key: a.key,
        body: { alias: 'bad', records: [{ type: 'A', name: 'x', value: 'nope' }] },
      })
      assert.deepEqual(bad.body, {
        status: 400,
        status_description: 'Invalid DNS record A x: value "nope" is not an IPv4 address',
      })
      const absolute = await t.request('POST', '/domains/dns-templates', {
        key: a.key,
        body: { alias: 'abs', records: [{ type: 'A', name: 'www.example.com.', value: '192.0.2.1' }] },
      })
      assert.equal(absolute.status, 400)
      const noAlias = await t.request('POST', '/domains/dns-templates', { key: a.key, body: { records: [] } })
      assert.deepEqual(noAlias.body.status_description, 'Missing alias')

      const upd = await t.request('PUT', `/domains/dns-templates/${tpl.id}`, { key: a.key, body: { alias: 'Renamed' } })
      assert.equal(upd.body.data.alias, 'Renamed')
      assert.equal(upd.body.data.records.length, 3, 'records stay when not given')
      const get = await t.request('GET', `/domains/dns-templates/${tpl.id}`, { key: a.key })
      assert.deepEqual(get.body.data, upd.body.data)
      assert.deepEqual((await t.request('GET', `/domains/dns-templates/${tpl.id}`, { key: b.key })).body, {
        status: 404,
        status_description: 'DNS template not found',
      })
      assert.deepEqual((await t.request('DELETE', `/domains/dns-templates/${tpl.id}`, { key: a.key })).body, {
        status: 200,
        status_description: 'DNS template deleted',
      })
      assert.deepEqual((await t.request('GET', `/domains/dns-templates/${tpl.id}`, { key: a.key })).body, {
        status: 404,
        status_description: 'DNS template not found',
      })
    })

    it("needs each profile area's own permission for a sub-user", async () => {
      const onlyContacts = await t.subUser(a, { 'domains-profiles': true })
      const onlyNs = await t.subUser(a, { 'domains-nameservers': true })
      const onlyTemplates = await t.subUser(a, { 'domains-dns-templates': true })
      const denied = { status: 403, status_description: 'Access denied' }
      assert.equal((await t.request('GET', '/domains/contacts', { key: onlyContacts.key })).status, 200)
      assert.deepEqual((await t.request('GET', '/domains/nameservers', { key: onlyContacts.key })).body, denied)
      assert.equal((await t.request('GET', '/domains/nameservers', { key: onlyNs.key })).status, 200)
      assert.deepEqual((await t.request('GET', '/domains/dns-templates', { key: onlyNs.key })).body, denied)
      assert.equal((await t.request('GET', '/domains/dns-templates', { key: onlyTemplates.key })).status, 200)
      assert.deepEqual((await t.request('GET', '/domains/contacts', { key: onlyTemplates.key })).body, denied)
    })
  })
})
