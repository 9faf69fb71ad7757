import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type Reply, type TestAccount, type TestApp } from './helpers/app.js'
import { contactProfile, makeDomain, uniqueName } from './helpers/fixtures/domains.js'
import { makeVps } from './helpers/fixtures/vps.js'

const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl tenancy'
const MISSING = 987654321

/** The answer as a client sees it: status and body (an id the text echoes is replaced by `<id>`). */
const seen = (r: Reply, id?: number | string) => ({
  status: r.status,
  body: id === undefined ? r.body : JSON.parse(JSON.stringify(r.body).split(String(id)).join('<id>')),
})

// Ids and names of another account given in request bodies: each is answered exactly as a missing one
// (same status, same text) and changes nothing.
forEachDialect((dialect) => {
  describe(`foreign ids in request bodies (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    let foreign: { contact: number; template: number; alias: string; sshKey: number; vps: number; paymethod: string }

    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Tenant A')
      b = await t.account('Tenant B')
      const contact = (await t.request('POST', '/domains/contacts', { key: b.key, body: contactProfile })).body.data
      const template = (
        await t.request('POST', '/domains/dns-templates', {
          key: b.key,
          body: { alias: 'b-web', records: [{ type: 'A', name: '', value: '192.0.2.7' }] },
        })
      ).body.data
      assert.equal(
        (
          await t.request('POST', '/domains/nameservers', {
            key: b.key,
            body: { alias: 'b-only', nameservers: ['ns1.b.example', 'ns2.b.example'] },
          })
        ).status,
        200,
      )
      const sshKey = await t.ctx.services.vps.sshKeys.add(b.accountId, 'b key', ED25519)
      foreign = {
        contact: contact.id,
        template: template.id,
        alias: 'b-only',
        sshKey: sshKey.id,
        vps: await makeVps(t, b, { settle: true, location: 'ams' }),
        paymethod: await t.ctx.services.paymethods.add(b.accountId, {
          type: 'creditcard',
          holder: 'B',
          account: '4111111111111111',
        }),
      }
    })
    after(() => t.close())

    /** A domain order of A left in `status: error` (its template removed before processing). */
    const erroredDomainOrder = async (): Promise<{ orderId: number; cartId: number; name: string }> => {
      const tpl = (
        await t.request('POST', '/domains/dns-templates', {
          key: a.key,
          body: { alias: `gone${Date.now() % 100000}`, records: [{ type: 'A', name: '', value: '192.0.2.1' }] },
        })
      ).body.data
      const name = uniqueName('fix', 'com')
      const placed = await t.request('POST', '/domains/order', {
        key: a.key,
        body: { domain: name, dns_template_id: tpl.id },
      })
      assert.equal(placed.status, 200, placed.text)
      await t.request('DELETE', `/domains/dns-templates/${tpl.id}`, { key: a.key })
      await t.ctx.jobs.drain()
      const order = (await t.request('GET', `/orders/${placed.body.data.order_id}`, { key: a.key })).body.data
      assert.equal(order.status, 'error')
      return { orderId: placed.body.data.order_id, cartId: order.services[0].cart_id, name }
    }

    it("PUT /orders/{id}: another account's contact, template or nameserver profile is refused like a missing one and not stored", async () => {
      const { orderId, cartId } = await erroredDomainOrder()
      const before = (await t.request('GET', `/orders/${orderId}`, { key: a.key })).body.data
      const cases: [unknown, unknown, string][] = [
        [{ profile: { owner: foreign.contact } }, { profile: { owner: MISSING } }, 'Contact profile not found'],
        [{ profile: { tech: foreign.contact } }, { profile: { tech: MISSING } }, 'Contact profile not found'],
        [{ dns_template_id: foreign.template }, { dns_template_id: MISSING }, 'DNS template not found'],
        [{ nameserver: foreign.alias }, { nameserver: 'no-such-alias' }, 'Nameservers name not found'],
      ]
      for (const [theirs, none, text] of cases) {
        for (const query of ['', '?test=1']) {
          const f = await t.request('PUT', `/orders/${orderId}${query}`, {
            key: a.key,
            body: { cart_id: cartId, domain: theirs },
          })
          const m = await t.request('PUT', `/orders/${orderId}${query}`, {
            key: a.key,
            body: { cart_id: cartId, domain: none },
          })
          assert.deepEqual(f.body, { status: 404, status_description: text }, JSON.stringify(theirs))
          assert.deepEqual(seen(f), seen(m), JSON.stringify(theirs))
        }
      }
      const after = (await t.request('GET', `/orders/${orderId}`, { key: a.key })).body.data
      assert.deepEqual(after, before)
      // A's own references are taken.
      const own = (await t.request('POST', '/domains/contacts', { key: a.key, body: contactProfile })).body.data
      const fixed = await t.request('PUT', `/orders/${orderId}`, {
        key: a.key,
        body: { cart_id: cartId, domain: { dns_template_id: 0, profile: { owner: own.id } } },
      })
      assert.equal(fixed.status, 200, fixed.text)
    })

    it("POST /domains/order: another account's contact, template or nameserver profile answers like a missing one", async () => {
      const name = uniqueName('tn', 'com')
      const cases: [Record<string, unknown>, Record<string, unknown>][] = [
        [{ profile: { owner: foreign.contact } }, { profile: { owner: MISSING } }],
        [{ dns_template_id: foreign.template }, { dns_template_id: MISSING }],
        [{ nameserver: foreign.alias }, { nameserver: 'no-such-alias' }],
      ]
      for (const [theirs, none] of cases) {
        const f = await t.request('POST', '/domains/order', { key: a.key, body: { domain: name, ...theirs } })
        const m = await t.request('POST', '/domains/order', { key: a.key, body: { domain: name, ...none } })
        assert.equal(f.status, 404, f.text)
        assert.deepEqual(seen(f), seen(m), JSON.stringify(theirs))
      }
      assert.equal(
        (await t.request('GET', '/orders', { key: a.key })).body.data.orders.filter(
          (o: { services: { name?: string; domain?: string }[] }) => JSON.stringify(o).includes(name),
        ).length,
        0,
      )
    })

    it("PUT /domains/{domain}: another account's contact or nameserver profile answers like a missing one", async () => {
      const name = await makeDomain(t, a)
      const before = (await t.request('GET', `/domains/${name}`, { key: a.key })).body.data
      const cases: [Record<string, unknown>, Record<string, unknown>][] = [
        [{ profile: { owner: foreign.contact } }, { profile: { owner: MISSING } }],
        [{ profile: { billing: foreign.contact } }, { profile: { billing: MISSING } }],
        [{ nameserver: foreign.alias }, { nameserver: 'no-such-alias' }],
      ]
      for (const [theirs, none] of cases) {
        const f = await t.request('PUT', `/domains/${name}`, { key: a.key, body: theirs })
        const m = await t.request('PUT', `/domains/${name}`, { key: a.key, body: none })
        assert.equal(f.status, 404, f.text)
        assert.deepEqual(seen(f), seen(m), JSON.stringify(theirs))
      }
      assert.deepEqual((await t.request('GET', `/domains/${name}`, { key: a.key })).body.data, before)
    })

    it("VPS bodies: another account's SSH key or VPS answers like a missing one", async () => {
      const order = (ids: number[]) =>
        t.request('POST', '/vps/order', {
          key: a.key,
          body: { product_id: 'vps-s', image_id: 'debian-12', hostname: 'tn.example.com', ssh_key_ids: ids },
        })
      assert.deepEqual(seen(await order([foreign.sshKey]), foreign.sshKey), seen(await order([MISSING]), MISSING))
      assert.equal((await order([foreign.sshKey])).status, 400)

      const mine = await makeVps(t, a, { settle: true, location: 'ams' })
      const reinstall = (ids: number[]) =>
        t.request('POST', `/vps/${mine}/reinstall`, { key: a.key, body: { image_id: 'debian-12', ssh_key_ids: ids } })
      assert.deepEqual(
        seen(await reinstall([foreign.sshKey]), foreign.sshKey),
        seen(await reinstall([MISSING]), MISSING),
      )

      const ip = await t.ctx.services.vps.network.reserveFloatingIp(a.accountId, 'ams')
      const attach = (vpsId: number) =>
        t.request('PUT', `/vps/floating-ips/${ip.id}/attach`, { key: a.key, body: { vps_id: vpsId } })
      const f = await attach(foreign.vps)
      assert.deepEqual(f.body, { status: 400, status_description: 'No access to this VPS' })
      assert.deepEqual(seen(f), seen(await attach(MISSING)))
      assert.equal(
        (await t.request('GET', '/vps/floating-ips', { key: a.key })).body.data.floating_ips.find(
          (x: { id: number }) => x.id === ip.id,
        ).vps_id,
        null,
      )
    })

    it("PUT /account/paymethods: another account's payment method answers like a missing one", async () => {
      const before = (await t.request('GET', '/account/paymethods', { key: a.key })).body.data
      const f = await t.request('PUT', '/account/paymethods', {
        key: a.key,
        body: { default_paymethod_id: foreign.paymethod },
      })
      const m = await t.request('PUT', '/account/paymethods', {
        key: a.key,
        body: { default_paymethod_id: String(MISSING) },
      })
      assert.equal(f.status, 400)
      assert.deepEqual(seen(f, foreign.paymethod), seen(m, MISSING))
      assert.deepEqual((await t.request('GET', '/account/paymethods', { key: a.key })).body.data, before)
    })
  })
})
