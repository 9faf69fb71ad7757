import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { ManualClock } from '../src/clock.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { contactProfile, makeDomain, uniqueName } from './helpers/fixtures/domains.js'

const noAccess = { status: 400, status_description: 'You have no access to this resource' }

forEachDialect((dialect) => {
  describe(`domains over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    let clock: ManualClock
    let names: string[]
    before(async () => {
      clock = new ManualClock()
      t = await startTestApp(dialect, {
        clock,
        env: { HOSTAPI_DEFAULT_NAMESERVERS: 'ns1.provider.test,ns2.provider.test' },
      })
      a = await t.account('Domains A')
      b = await t.account('Domains B')
      names = [
        await makeDomain(t, a, uniqueName('alpha')),
        await makeDomain(t, a, uniqueName('beta')),
        await makeDomain(t, a, uniqueName('gamma', 'com')),
      ]
      await t.request('PUT', `/domains/${names[0]}`, { key: a.key, body: { tags: ['web', 'prod'] } })
      await t.request('PUT', `/domains/${names[1]}`, { key: a.key, body: { tags: ['mail'] } })
      await makeDomain(t, b, uniqueName('other'))
    })
    after(() => t.close())

    it('lists every domain of the account by id, without pagination when no page or limit is given', async () => {
      const r = await t.request('GET', '/domains', { key: a.key })
      assert.equal(r.status, 200)
      assert.equal(r.body.status, 200)
      assert.equal(r.body.status_description, 'Request successful')
      assert.deepEqual(
        r.body.data.domains.map((d: { domain: string }) => d.domain),
        names,
      )
      assert.equal('pagination' in r.body.data, false)
      const [first] = r.body.data.domains
      assert.deepEqual(Object.keys(first).sort(), ['domain', 'id', 'renewal_date', 'status', 'status_id', 'tags'])
      assert.equal(first.status, 'active')
      assert.equal(first.status_id, 1)
      assert.match(first.renewal_date, /^\d{4}-\d\d-\d\d$/)
      assert.deepEqual(first.tags, ['web', 'prod'])
      const ids = r.body.data.domains.map((d: { id: number }) => d.id)
      assert.deepEqual(
        ids,
        [...ids].sort((x: number, y: number) => x - y),
      )
    })

    it('filters by tags (any of them) and by search, and pages when asked', async () => {
      const tagged = await t.request('GET', '/domains/?tags=mail,prod', { key: a.key })
      assert.deepEqual(
        tagged.body.data.domains.map((d: { domain: string }) => d.domain),
        [names[0], names[1]],
      )
      const one = await t.request('GET', '/domains?tags=mail', { key: a.key })
      assert.deepEqual(
        one.body.data.domains.map((d: { domain: string }) => d.domain),
        [names[1]],
      )
      const none = await t.request('GET', '/domains?tags=nothing', { key: a.key })
      assert.deepEqual(none.body.data.domains, [])
      const search = await t.request('GET', '/domains?search=GAMMA', { key: a.key })
      assert.deepEqual(
        search.body.data.domains.map((d: { domain: string }) => d.domain),
        [names[2]],
      )
      const underscore = await t.request('GET', '/domains?search=_', { key: a.key })
      assert.deepEqual(underscore.body.data.domains, [], '_ is not a wildcard')
      const page = await t.request('GET', '/domains?page=2&limit=2', { key: a.key })
      assert.deepEqual(
        page.body.data.domains.map((d: { domain: string }) => d.domain),
        [names[2]],
      )
      assert.deepEqual(page.body.data.pagination, { page: 2, limit: 2, total: 3, total_pages: 2 })
      const out = await t.request('GET', '/domains?page=3&limit=2', { key: a.key })
      assert.deepEqual(out.body, { status: 400, status_description: 'Page out of range' })
      const bad = await t.request('GET', '/domains?limit=0', { key: a.key })
      assert.equal(bad.status, 400)
    })

    it('shows one domain in full', async () => {
      const r = await t.request('GET', `/domains/${names[0]}`, { key: a.key })
      assert.equal(r.status, 200)
      const d = r.body.data
      assert.equal(d.domain, names[0])
      assert.deepEqual(d.tags, ['web', 'prod'])
      assert.deepEqual(d.nameservers, ['ns1.provider.test', 'ns2.provider.test'])
      assert.deepEqual(d.nameserver_details, [
        { hostname: 'ns1.provider.test', ipv4: '', ipv6: '' },
        { hostname: 'ns2.provider.test', ipv4: '', ipv6: '' },
      ])
      assert.equal(d.nameserver_profile, 'default-mijnhost')
      assert.equal(d.dnssec_enabled, 0)
      assert.deepEqual(d.dnssec_keys, [])
      assert.equal(d.forwarder, null)
      // Types as the API's generated clients (Go) decode them: booleans, not 0/1, except dnssec_enabled.
      assert.equal(d.forwarder_enabled, false)
      assert.equal(d.forwarder_blocked_by_hosting, false)
      assert.equal(d.is_lockable, true)
      assert.equal(d.is_locked, true)
      assert.equal(d.managed_dns, true)
      assert.equal(d.whitelabel_ns, false)
      assert.deepEqual(d.handles, { owner: null, admin: null, tech: null, reseller: null, billing: null })
      assert.deepEqual(d.messages, [])
      // Upper case and a trailing dot name the same domain.
      const upper = await t.request('GET', `/domains/${names[0].toUpperCase()}.`, { key: a.key })
      assert.equal(upper.body.data.domain, names[0])
    })

    it('answers 400 "You have no access to this resource" for other accounts\' and unknown domains, 400 "Invalid domain name" for bad syntax', async () => {
      const [otherDomain] = (await t.request('GET', '/domains', { key: b.key })).body.data.domains
      for (const path of [
        `/domains/${otherDomain.domain}`,
        `/domains/${otherDomain.domain}/dns`,
        `/domains/${otherDomain.domain}/auth-code`,
        '/domains/unknown-domain.nl',
      ]) {
        const r = await t.request('GET', path, { key: a.key })
        assert.deepEqual(r.body, noAccess, path)
      }
      const del = await t.request('DELETE', `/domains/${otherDomain.domain}`, { key: a.key })
      assert.deepEqual(del.body, noAccess)
      for (const bad of ['not_a_domain', 'nodot', 'a..b.nl', '-x.nl']) {
        const r = await t.request('GET', `/domains/${encodeURIComponent(bad)}`, { key: a.key })
        assert.deepEqual(r.body, { status: 400, status_description: 'Invalid domain name' }, bad)
      }
    })

    it('updates tags, lock, nameservers, forwarder, dnssec and contacts; omitted fields stay', async () => {
      const name = names[2]
      const tags = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { tags: ['a.b', 'c_d', 'e-f'] } })
      assert.equal(tags.status, 200)
      assert.deepEqual(tags.body.data.tags, ['a.b', 'c_d', 'e-f'])
      const badTag = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { tags: ['Bad Tag'] } })
      assert.deepEqual(badTag.body, {
        status: 400,
        status_description: 'Invalid tag "Bad Tag": use a-z, 0-9, dot, underscore and dash',
      })

      const before = (await t.request('GET', `/domains/${name}/dns/zone`, { key: a.key })).body.data.zone as string
      const ns = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: {
          nameservers: ['NS1.Example.net.', { hostname: 'ns2.example.net', ipv4: '192.0.2.53', ipv6: '2001:db8::53' }],
        },
      })
      assert.equal(ns.status, 200)
      assert.deepEqual(ns.body.data.nameservers, ['ns1.example.net', 'ns2.example.net'])
      assert.deepEqual(ns.body.data.nameserver_details, [
        { hostname: 'ns1.example.net', ipv4: '', ipv6: '' },
        { hostname: 'ns2.example.net', ipv4: '192.0.2.53', ipv6: '2001:db8::53' },
      ])
      assert.equal(ns.body.data.nameserver_profile, null)
      assert.equal(ns.body.data.managed_dns, false, 'other nameservers: the zone here is not the one served')
      assert.deepEqual(ns.body.data.tags, ['a.b', 'c_d', 'e-f'], 'tags unchanged')
      const after = (await t.request('GET', `/domains/${name}/dns/zone`, { key: a.key })).body.data.zone as string
      assert.match(after, /IN\s+NS\s+ns1\.example\.net\./)
      assert.ok(serialOf(after) > serialOf(before), 'the zone serial went up')

      const both = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { nameserver: 'default-mijnhost', nameservers: ['ns1.x.nl', 'ns2.x.nl'] },
      })
      assert.deepEqual(both.body, {
        status: 400,
        status_description: 'Set either nameserver (a profile alias) or nameservers, not both',
      })
      const one = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { nameservers: ['ns1.x.nl'] } })
      assert.deepEqual(one.body, { status: 400, status_description: 'A domain needs 2 to 13 nameservers' })
      const badHost = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { nameservers: ['ns1.x.nl', 'not a host'] },
      })
      assert.deepEqual(badHost.body, { status: 400, status_description: 'Invalid nameserver hostname: not a host' })
      const unknownProfile = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { nameserver: 'nope' } })
      assert.deepEqual(unknownProfile.body, { status: 404, status_description: 'Nameservers name not found' })
      const builtin = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { nameserver: 'default-mijnhost' },
      })
      assert.equal(builtin.body.data.nameserver_profile, 'default-mijnhost')
      assert.equal(builtin.body.data.nameservers[0], 'ns1.provider.test')
      assert.equal(builtin.body.data.managed_dns, true)

      const fwd = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { forwarder: { enabled: true, type: 302, url: 'https://www.example.org/landing' } },
      })
      assert.deepEqual(fwd.body.data.forwarder, { type: 302, url: 'https://www.example.org/landing' })
      assert.equal(fwd.body.data.forwarder_enabled, true)
      const badFwd = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { forwarder: { enabled: true, type: 307, url: 'https://x.nl' } },
      })
      assert.deepEqual(badFwd.body, {
        status: 400,
        status_description: 'Invalid forwarder: type must be 301, 302 or 303',
      })
      const ftp = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { forwarder: { url: 'ftp://x.nl' } } })
      assert.deepEqual(ftp.body, {
        status: 400,
        status_description: 'Invalid forwarder: url must be an http or https URL',
      })

      // On the provider's nameservers the zone is signed here: the key is made, whatever key fields are sent.
      const sec = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { dnssec: { enabled: true, flags: 1, alg: 13, protocol: 3, pubKey: 'ignored' } },
      })
      assert.equal(sec.body.data.dnssec_enabled, 1)
      assert.deepEqual(
        sec.body.data.dnssec_keys.map((k: { alg: number; flags: number }) => [k.alg, k.flags]),
        [[13, 257]],
      )
      const off = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { dnssec: { enabled: false } } })
      assert.equal(off.body.data.dnssec_enabled, 0)

      // On other nameservers the key is given, and checked.
      const external = { nameservers: ['ns1.example.net', 'ns2.example.net'] }
      const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })
      const point = Buffer.concat([Buffer.from(p256.x!, 'base64url'), Buffer.from(p256.y!, 'base64url')])
      const goodKey = point.toString('base64')
      const given = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { ...external, dnssec: { enabled: true, flags: 257, alg: 13, protocol: 3, pubKey: goodKey } },
      })
      assert.equal(given.body.data.dnssec_enabled, 1)
      assert.deepEqual(given.body.data.dnssec_keys, [{ alg: 13, flags: 257, pubKey: goodKey }])
      assert.equal(given.body.data.managed_dns, false)
      const parent = await t.ctx.drivers.registry.dnssec(name)
      assert.deepEqual(
        parent.map((k) => [k.flags, k.protocol, k.algorithm, k.publicKey, k.digestType]),
        [[257, 3, 13, goodKey, 2]],
        'the registry gets the given key with its DS',
      )
      const badSec = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { dnssec: { enabled: true, flags: 1, alg: 13, pubKey: goodKey } },
      })
      assert.deepEqual(badSec.body, {
        status: 400,
        status_description: 'Invalid dnssec: flags must be 256 (ZSK) or 257 (KSK)',
      })
      const notAPoint = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { dnssec: { enabled: true, flags: 257, alg: 13, pubKey: point.subarray(1).toString('base64') } },
      })
      assert.deepEqual(notAPoint.body, {
        status: 400,
        status_description: 'Invalid dnssec: pubKey must be a P-256 point of 64 bytes for alg 13',
      })
      const notRsa = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { dnssec: { enabled: true, flags: 257, alg: 8, pubKey: goodKey } },
      })
      assert.deepEqual(notRsa.body, {
        status: 400,
        status_description: 'Invalid dnssec: pubKey must be an RSA key in RFC 3110 form (512 to 4096 bits) for alg 8',
      })
      const offAgain = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { dnssec: { enabled: false } } })
      assert.equal(offAgain.body.data.dnssec_enabled, 0)
      const back = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { nameserver: 'default-mijnhost' } })
      assert.equal(back.body.data.managed_dns, true)

      const contact = await t.request('POST', '/domains/contacts', { key: a.key, body: contactProfile })
      const prof = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { profile: { owner: contact.body.data.id, tech: contact.body.data.id } },
      })
      assert.deepEqual(prof.body.data.handles.owner, {
        handle_id: contact.body.data.id,
        name: 'Jan Jansen',
        type: 'person',
      })
      assert.equal(prof.body.data.handles.admin, null)
      const cleared = await t.request('PUT', `/domains/${name}`, { key: a.key, body: { profile: { tech: null } } })
      assert.equal(cleared.body.data.handles.tech, null)
      assert.equal(cleared.body.data.handles.owner.handle_id, contact.body.data.id, 'roles left out keep their contact')
      const otherContact = await t.request('POST', '/domains/contacts', { key: b.key, body: contactProfile })
      const foreign = await t.request('PUT', `/domains/${name}`, {
        key: a.key,
        body: { profile: { owner: otherContact.body.data.id } },
      })
      assert.deepEqual(foreign.body, { status: 404, status_description: 'Contact profile not found' })
      const inUse = await t.request('DELETE', `/domains/contacts/${contact.body.data.id}`, { key: a.key })
      assert.deepEqual(inUse.body, {
        status: 400,
        status_description: 'The contact profile is in use by a domain and cannot be deleted',
      })
    })

    it('accepts a PUT body sent without a Content-Type', async () => {
      const r = await t.request('PUT', `/domains/${names[1]}`, {
        key: a.key,
        rawBody: JSON.stringify({ tags: ['raw'] }),
      })
      assert.equal(r.status, 200)
      assert.deepEqual(r.body.data.tags, ['raw'])
    })

    it('gives out the auth code only for an unlocked domain', async () => {
      const name = names[1]
      const locked = await t.request('GET', `/domains/${name}/auth-code`, { key: a.key })
      assert.deepEqual(locked.body, {
        status: 400,
        status_description: 'The domain is locked; unlock it to get the auth code',
      })
      await t.request('PUT', `/domains/${name}`, { key: a.key, body: { is_locked: false } })
      const code = await t.request('GET', `/domains/${name}/auth-code`, { key: a.key })
      assert.equal(code.status, 200)
      assert.match(code.body.data.auth_code, /^.{16}$/)
      const again = await t.request('GET', `/domains/${name}/auth-code`, { key: a.key })
      assert.equal(again.body.data.auth_code, code.body.data.auth_code, 'the same code every time')
    })

    it('cancels a domain at its renewal date, can withdraw the cancellation, and the job ends it when due', async () => {
      const name = await makeDomain(t, a, uniqueName('cancel'))
      const keep = await makeDomain(t, a, uniqueName('keep'))
      const renewal = (await t.request('GET', `/domains/${name}`, { key: a.key })).body.data.renewal_date

      const none = await t.request('PUT', `/domains/${name}/cancel-delete`, { key: a.key })
      assert.deepEqual(none.body, {
        status: 400,
        status_description: 'There is no pending cancellation for this domain',
      })

      const del = await t.request('DELETE', `/domains/${name}`, { key: a.key })
      assert.deepEqual(del.body, {
        status: 200,
        status_description: 'Domain cancellation scheduled',
        data: { cancellation_date: renewal },
      })
      const twice = await t.request('DELETE', `/domains/${name}`, { key: a.key })
      assert.deepEqual(twice.body, {
        status: 400,
        status_description: 'A cancellation of this domain is already pending',
      })
      const shown = (await t.request('GET', `/domains/${name}`, { key: a.key })).body.data
      assert.equal(shown.status, 'pending_cancellation')
      assert.equal(shown.status_id, 2)
      assert.equal(shown.cancellation_date, renewal)
      assert.ok(shown.messages.includes(`Cancellation pending: the domain ends on ${renewal}`))

      // Nothing ends before the renewal date.
      assert.equal(await t.ctx.jobs.drain(), 0)

      await t.request('DELETE', `/domains/${keep}`, { key: a.key })
      const undo = await t.request('PUT', `/domains/${keep}/cancel-delete/`, { key: a.key })
      assert.deepEqual(undo.body, { status: 200, status_description: 'Domain cancellation withdrawn' })
      assert.equal((await t.request('GET', `/domains/${keep}`, { key: a.key })).body.data.status, 'active')

      clock.advance(201 * 86_400_000)
      assert.ok((await t.ctx.jobs.drain()) >= 2)
      assert.deepEqual(
        (await t.request('GET', `/domains/${name}`, { key: a.key })).body,
        noAccess,
        'the cancelled domain ended',
      )
      assert.equal(
        (await t.request('GET', `/domains/${keep}`, { key: a.key })).body.data.status,
        'active',
        'the withdrawn one stays',
      )
      const avail = await t.request('GET', `/domains/availability/${name}`, { key: a.key })
      assert.equal(avail.body.data.status, 'available', 'an ended name is free again')
    })

    it('needs the domains permission for a sub-user', async () => {
      const denied = await t.subUser(a, { 'domains-profiles': true })
      assert.deepEqual((await t.request('GET', '/domains', { key: denied.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
      assert.deepEqual((await t.request('GET', `/domains/${names[0]}/dns`, { key: denied.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
      const allowed = await t.subUser(a, { domains: true })
      assert.equal((await t.request('GET', '/domains', { key: allowed.key })).body.data.domains.length >= 3, true)
      assert.deepEqual((await t.request('GET', '/domains/contacts', { key: allowed.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
    })
  })
})

function serialOf(zone: string): number {
  const m = /SOA\s+\S+\s+\S+\s+\(?\s*(\d+)/.exec(zone)
  assert.ok(m, `no SOA serial in:\n${zone}`)
  return Number(m[1])
}
