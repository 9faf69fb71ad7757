import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, type TestAccount, type TestApp } from './helpers/app.js'
import { startAdminTestApp } from './helpers/admin.js'

forEachDialect((dialect) => {
  describe(`admin API: extensions, premium and reserved names, VPS images (${dialect})`, () => {
    let t: TestApp
    let token: string
    let a: TestAccount
    const adm = (method: string, p: string, body?: unknown, tok = token) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${tok}` } })

    before(async () => {
      ;({ t, token, a } = await startAdminTestApp(dialect))
    })
    after(() => t.close())

    it('sets extension prices and premium names that customers see', async () => {
      const set = await adm('PUT', '/extensions/.com', { register_price: 8.5, renew_price: 11, transfer_price: 7.25 })
      assert.equal(set.status, 200, set.text)
      assert.equal(set.body.data.register_price, '8.50')
      const seen = await t.request('GET', '/domains/extensions/com', { key: a.key })
      assert.deepEqual(
        [seen.body.data.register_price, seen.body.data.renew_price, seen.body.data.transfer_price],
        ['8.50', '11.00', '7.25'],
      )

      const added = await adm('PUT', '/extensions/example', {
        register_price: 1,
        renew_price: 2,
        transfer_price: 3,
        max_period: 5,
        supports_privacy: true,
      })
      assert.equal(added.body.data.max_period, 5)
      assert.equal((await t.request('GET', '/domains/extensions/example', { key: a.key })).status, 200)
      assert.equal((await adm('DELETE', '/extensions/example')).status, 200)
      assert.deepEqual((await t.request('GET', '/domains/extensions/example', { key: a.key })).body, {
        status: 404,
        status_description: 'Extension not found',
      })
      assert.equal(
        (await adm('PUT', '/extensions/bad_ext', { register_price: 1, renew_price: 1, transfer_price: 1 })).status,
        400,
      )

      const premium = await adm('PUT', '/premium-names/gold.com', { register_price: 2500, renew_price: 29.99 })
      assert.deepEqual(premium.body.data, { name: 'gold.com', register_price: 2500, renew_price: 29.99 })
      const avail = await t.request('GET', '/domains/availability/gold.com', { key: a.key })
      assert.equal(avail.body.data.is_premium, true)
      assert.ok(
        (await adm('GET', '/premium-names')).body.data.premium_names.some(
          (p: { name: string }) => p.name === 'gold.com',
        ),
      )
      await adm('DELETE', '/premium-names/gold.com')
      assert.equal(
        (await t.request('GET', '/domains/availability/gold.com', { key: a.key })).body.data.is_premium,
        false,
      )
      assert.deepEqual((await adm('DELETE', '/premium-names/gold.com')).body, {
        status: 404,
        status_description: 'Premium name not found',
      })

      const reserved = await adm('PUT', '/reserved-names/kept-name.nl', { reason: 'Registry policy' })
      assert.equal(reserved.status, 200, reserved.text)
      assert.equal(reserved.body.data.reason, 'Registry policy')
      assert.equal(
        (await t.request('GET', '/domains/availability/kept-name.nl', { key: a.key })).body.data.status,
        'unavailable',
      )
      assert.deepEqual(
        (await adm('GET', '/reserved-names')).body.data.reserved_names.map((r: { name: string }) => r.name),
        ['kept-name.nl'],
      )
      assert.equal((await adm('DELETE', '/reserved-names/kept-name.nl')).status, 200)
      assert.equal(
        (await t.request('GET', '/domains/availability/kept-name.nl', { key: a.key })).body.data.status,
        'available',
      )
      assert.deepEqual((await adm('DELETE', '/reserved-names/kept-name.nl')).body, {
        status: 404,
        status_description: 'Reserved name not found',
      })
      assert.equal((await adm('PUT', '/reserved-names/not a name', {})).status, 400)
    })

    it('lists the VPS images', async () => {
      const r = await adm('GET', '/vps/images')
      assert.equal(r.status, 200)
      assert.ok(r.body.data.images.length > 0)
      assert.deepEqual(Object.keys(r.body.data.images[0]).sort(), ['family', 'id', 'name', 'slug', 'version'])
    })
  })
})
