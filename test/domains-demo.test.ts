import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { dialects, startTestApp, type TestApp } from './helpers/app.js'

for (const dialect of dialects) {
  describe(`domains demo data (${dialect})`, () => {
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
      assert.deepEqual(domains.map((d: { domain: string; tags: string[] }) => [d.domain, d.tags]), [
        ['demo-shop.nl', ['web', 'shop']],
        ['demo-blog.com', ['web']],
        ['demo-mail.eu', ['mail']],
      ])
      assert.deepEqual((await get('/domains?tags=mail')).data.domains.map((d: { domain: string }) => d.domain), ['demo-mail.eu'])
      const shop = (await get('/domains/demo-shop.nl')).data
      assert.equal(shop.handles.owner.name, 'Demo B.V.')
      assert.equal(shop.handles.owner.type, 'company')
      const records = (await get('/domains/demo-blog.com/dns')).data.records
      assert.ok(records.some((r: { type: string; name: string; value: string }) => r.type === 'TXT' && r.name === '_acme-challenge.demo-blog.com.'))
      assert.ok(records.some((r: { type: string; value: string }) => r.type === 'MX' && r.value === '10 mail.demo-blog.com.'))
      assert.equal((await get('/domains/demo-blog.com/auth-code')).status, 200, 'the unlocked demo domain gives its auth code')
    })

    it('seeds a contact profile, a nameserver profile and a DNS template', async () => {
      assert.equal((await get('/domains/contacts')).data.contacts.length, 1)
      const ns = (await get('/domains/nameservers')).data.profiles.map((p: { alias: string }) => p.alias)
      assert.deepEqual(ns, ['default-mijnhost', 'demo-external'])
      assert.deepEqual((await get('/domains/dns-templates')).data.templates.map((x: { alias: string; default: number }) => [x.alias, x.default]), [['Website + mail', 1]])
    })

    it('seeds one open order in status error: a transfer with a wrong code', async () => {
      const orders = (await get('/orders')).data.orders
      const transfer = orders.find((o: { services: { type: string }[] }) => o.services.some((s) => s.type === 'domain'))
      assert.ok(transfer)
      assert.equal(transfer.status, 'error')
      assert.deepEqual(transfer.services[0].errors, [{ code: 'transfer_code', description: 'The transfer code is not correct' }])
      assert.equal(transfer.services[0].name, 'example.org')
    })
  })
}
