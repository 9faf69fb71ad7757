import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import type { BuiltinHypervisor } from '../src/drivers/hypervisor/builtin.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { addMonths } from '../src/modules/vps/vps-lifecycle.service.js'
import { sshKey } from './helpers/admin.js'

// Rescue, reinstall, password, hostname, reverse DNS, cancellation, images and products; and ordering.
forEachDialect((dialect) => {
  describe(`VPS over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let _b: TestAccount
    const clock = new ManualClock()
    const drain = () => t.ctx.jobs.drain()
    const hv = () => t.ctx.drivers.hypervisor as BuiltinHypervisor
    const refOf = async (id: number) =>
      (await t.ctx.db.selectFrom('vps').select('instance_ref').where('id', '=', id).executeTakeFirstOrThrow())
        .instance_ref
    const req = (method: string, path: string, body?: unknown, key = a.key) => t.request(method, path, { key, body })
    const bad = (text: string) => ({ status: 400, status_description: text })

    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_SIM_SPEED: '1000000' }, clock })
      a = await t.account('VPS Owner')
      _b = await t.account('Other Tenant')
    })
    after(() => t.close())

    describe('instances', () => {
      it('enables rescue mode with a one-time password and disables it again', async () => {
        const id = await makeVps(t, a, { settle: true })
        const on = await req('PUT', `/vps/${id}/rescue`, { enable: true })
        assert.equal(on.status, 200)
        assert.match(on.body.data.rescue_password, /^[A-Za-z0-9]{20}$/)
        assert.equal(on.body.data.task.action, 'rescue_on')
        await drain()
        const d = (await req('GET', `/vps/${id}`)).body.data
        assert.deepEqual([d.status, d.rescue], ['rescue', true])
        const task = await t.ctx.db
          .selectFrom('vps_tasks')
          .select('params')
          .where('id', '=', on.body.data.task.id)
          .executeTakeFirstOrThrow()
        assert.ok(!task.params.includes(on.body.data.rescue_password), 'the password is not kept once the task ended')
        const off = await req('PUT', `/vps/${id}/rescue`, { enable: false })
        assert.equal(off.body.data.rescue_password, null)
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.rescue, false)
        assert.equal((await req('PUT', `/vps/${id}/rescue`, { enable: 'yes' })).status, 400)
      })

      it('reinstalls from an image with a new root password shown once, checking image and SSH keys', async () => {
        const id = await makeVps(t, a, { settle: true })
        assert.deepEqual(
          (await req('POST', `/vps/${id}/reinstall`, { image_id: 'windows-95' })).body,
          bad('Unknown image_id: see GET /vps/images'),
        )
        assert.deepEqual(
          (await req('POST', `/vps/${id}/reinstall`, { image_id: 'debian-12', ssh_key_ids: [987654] })).body,
          bad('Unknown SSH key id 987654: see GET /vps/ssh-keys'),
        )
        const key = await req('POST', '/vps/ssh-keys', { name: 'deploy', public_key: sshKey('ed25519') })
        const r = await req('POST', `/vps/${id}/reinstall`, { image_id: 'rocky-9', ssh_key_ids: [key.body.data.id] })
        assert.equal(r.status, 200)
        assert.match(r.body.data.root_password, /^[A-Za-z0-9]{20}$/)
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'installing')
        await drain()
        const d = (await req('GET', `/vps/${id}`)).body.data
        assert.deepEqual([d.status, d.image.slug], ['running', 'rocky-9'])
        const inst = await hv().inspect(await refOf(id))
        assert.deepEqual(inst!.ssh_keys, [key.body.data.public_key])
      })

      it('takes image_id as the integer id from GET /vps/images or as the slug', async () => {
        const images = (await req('GET', '/vps/images')).body.data.images
        const ubuntu = images.find((i: { slug: string }) => i.slug === 'ubuntu-24.04')
        assert.ok(Number.isInteger(ubuntu.id))
        const id = await makeVps(t, a, { settle: true })
        for (const imageId of [ubuntu.id, String(ubuntu.id), 'ubuntu-24.04']) {
          const r = await req('POST', `/vps/${id}/reinstall`, { image_id: imageId })
          assert.equal(r.status, 200, JSON.stringify(r.body))
          await drain()
          const d = (await req('GET', `/vps/${id}`)).body.data
          assert.deepEqual(d.image, { id: ubuntu.id, slug: 'ubuntu-24.04', name: ubuntu.name })
        }
        for (const unknown of [999, 0, 'windows-95']) {
          const r = await req('POST', `/vps/${id}/reinstall`, { image_id: unknown })
          assert.equal(r.status, 400, String(unknown))
        }
        assert.deepEqual(
          (await req('POST', `/vps/${id}/reinstall`, { image_id: 999 })).body,
          bad('Unknown image_id: see GET /vps/images'),
        )
        const order = await req('POST', '/vps/order', { product_id: 'vps-s', image_id: 1, hostname: 'int.example.com' })
        assert.equal(order.status, 200, JSON.stringify(order.body))
        await drain()
        const v = (await req('GET', '/vps')).body.data.vps.find(
          (x: { hostname: string }) => x.hostname === 'int.example.com',
        )
        assert.equal((await req('GET', `/vps/${v.id}`)).body.data.image.slug, 'debian-12')
      })

      it('resets the root password of a running VPS and refuses a stopped one', async () => {
        const id = await makeVps(t, a, { settle: true })
        const before = (await hv().inspect(await refOf(id)))!.root_password_hash
        const r = await req('POST', `/vps/${id}/reset-password`)
        assert.equal(r.status, 200)
        assert.match(r.body.data.root_password, /^[A-Za-z0-9]{20}$/)
        assert.notEqual((await hv().inspect(await refOf(id)))!.root_password_hash, before)
        await req('POST', `/vps/${id}/poweroff`)
        await drain()
        assert.deepEqual(
          (await req('POST', `/vps/${id}/reset-password`)).body,
          bad('The VPS must be running to reset the root password'),
        )
      })

      it('changes the hostname (RFC 1123) and refuses invalid ones', async () => {
        const id = await makeVps(t, a, { settle: true })
        const r = await req('PUT', `/vps/${id}/hostname`, { hostname: 'App-2.Example.com.' })
        assert.deepEqual(r.body.data, { id, hostname: 'app-2.example.com' })
        assert.equal((await hv().getInstance(await refOf(id)))?.hostname, 'app-2.example.com')
        const text =
          'Invalid hostname: labels of letters, digits and hyphens, at most 63 characters each and 253 in all (RFC 1123)'
        for (const hostname of [
          '-bad.example.com',
          'bad-.example.com',
          'a..b',
          'under_score.example.com',
          `${'a'.repeat(64)}.example.com`,
          'spa ce.com',
        ]) {
          assert.deepEqual((await req('PUT', `/vps/${id}/hostname`, { hostname })).body, bad(text), hostname)
        }
        assert.equal((await req('PUT', `/vps/${id}/hostname`, {})).body.status_description, 'Missing hostname')
      })

      it('sets reverse DNS of its own addresses only', async () => {
        const id = await makeVps(t, a, { settle: true })
        const d = (await req('GET', `/vps/${id}`)).body.data
        const [v4, v6] = d.ips.map((i: { ip: string }) => i.ip)
        const r = await req('PUT', `/vps/${id}`, {
          'ip-addresses': [
            { ip: v4, reverse: 'mail.example.com' },
            { ip: v6, reverse: 'mail6.example.com.' },
          ],
        })
        assert.equal(r.status, 200)
        assert.deepEqual(
          r.body.data.ips.map((i: { reverse: string }) => i.reverse),
          ['mail.example.com', 'mail6.example.com'],
        )
        assert.equal((await hv().inspect(await refOf(id)))!.reverse_dns[v4], 'mail.example.com')
        assert.deepEqual(
          (await req('PUT', `/vps/${id}`, { 'ip-addresses': [{ ip: '192.0.2.55', reverse: 'x.example.com' }] })).body,
          bad('IP address 192.0.2.55 does not belong to this VPS'),
        )
        assert.deepEqual(
          (await req('PUT', `/vps/${id}`, { 'ip-addresses': [{ ip: v4, reverse: 'not a name' }] })).body,
          bad(`Invalid reverse name for ${v4}: must be a hostname such as server.example.com`),
        )
        const reset = await req('PUT', `/vps/${id}`, { 'ip-addresses': [{ ip: v4, reverse: '' }] })
        assert.equal(reset.body.data.ips[0].reverse, d.hostname)
      })

      it('cancels at the end of the billing period, undoes it, and ends the VPS when the date comes', async () => {
        const id = await makeVps(t, a, { settle: true })
        const created = new Date(
          (await t.ctx.db.selectFrom('vps').select('created_at').where('id', '=', id).executeTakeFirstOrThrow())
            .created_at,
        )
        // addMonths has its own unit tests (month ends); here it names the expected date.
        const end = addMonths(created, 1)
        const c = await req('DELETE', `/vps/${id}`)
        assert.deepEqual(c.body.data, { id, cancellation_date: end.toISOString().slice(0, 10) })
        assert.deepEqual((await req('DELETE', `/vps/${id}`)).body, bad('A cancellation of this VPS is already pending'))
        assert.equal((await req('GET', `/vps/${id}`)).body.data.cancellation_date, end.toISOString().slice(0, 10))
        assert.deepEqual((await req('PUT', `/vps/${id}/cancel-delete`)).body.data, { id, cancellation_date: null })
        assert.deepEqual(
          (await req('PUT', `/vps/${id}/cancel-delete`)).body,
          bad('There is no pending cancellation for this VPS'),
        )
        // The expiry job queued by the first cancellation finds nothing to do once it is undone.
        clock.advance(32 * 86_400_000)
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
        await req('DELETE', `/vps/${id}`)
        clock.advance(32 * 86_400_000)
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'terminated')
        assert.equal(await hv().getInstance(await refOf(id)), null)
        assert.deepEqual((await req('POST', `/vps/${id}/start`)).body, bad('This VPS has been cancelled and removed'))
      })

      it('puts off the end of a cancelled VPS while a task holds it', async () => {
        const id = await makeVps(t, a, { settle: true })
        await req('DELETE', `/vps/${id}`)
        clock.advance(32 * 86_400_000)
        await req('POST', `/vps/${id}/backups`)
        assert.deepEqual(await t.ctx.services.vps.lifecycle.expire(id), { expired: false })
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
        clock.advance(120_000)
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'terminated')
      })

      it('lists images and products', async () => {
        const images = (await req('GET', '/vps/images')).body.data.images
        assert.deepEqual(images[0], {
          id: 1,
          slug: 'debian-12',
          name: 'Debian 12 (Bookworm)',
          family: 'debian',
          version: '12',
        })
        for (const i of images) assert.deepEqual(Object.keys(i).sort(), ['family', 'id', 'name', 'slug', 'version'])
        const products = (await req('GET', '/vps/products')).body.data.products
        assert.deepEqual(products[0], {
          id: 'vps-s',
          name: 'VPS S',
          cpu: 1,
          memory_mb: 2048,
          disk_gb: 40,
          price: 4.99,
          locations: ['ams', 'rtm'],
          durations: [1, 3, 6, 12, 24],
        })
      })
    })

    describe('ordering', () => {
      it('orders a VPS: the order job provisions it through the vps processor', async () => {
        const r = await req('POST', '/vps/order', {
          product_id: 'vps-l',
          image_id: 'ubuntu-24.04',
          hostname: 'ordered.example.com',
          location: 'rtm',
          duration: 12,
        })
        assert.equal(r.status, 200, JSON.stringify(r.body))
        const orderId = r.body.data.order_id
        assert.ok(Number.isInteger(orderId))
        await drain()
        const order = await req('GET', `/orders/${orderId}`)
        assert.equal(order.body.data.status, 'completed')
        const v = (await req('GET', '/vps')).body.data.vps.find(
          (x: { hostname: string }) => x.hostname === 'ordered.example.com',
        )
        assert.ok(v, 'the ordered VPS exists')
        assert.deepEqual([v.product, v.location, v.status], ['vps-l', 'rtm', 'running'])
        const item = await t.ctx.db
          .selectFrom('order_items')
          .selectAll()
          .where('order_id', '=', orderId)
          .executeTakeFirstOrThrow()
        assert.equal(item.price_cents, 1999 * 12)
        assert.deepEqual(JSON.parse(item.result!), { vps_id: v.id })
        // Processing the item again (a retried order job) finds the VPS instead of making another.
        const again = await t.ctx.services.vps.ordering.processOrderItem({
          id: item.id,
          accountId: a.accountId,
          details: JSON.parse(item.details),
        })
        assert.deepEqual(again, { errors: [], result: { vps_id: v.id } })
        const made = await t.ctx.db.selectFrom('vps').select('id').where('order_item_id', '=', item.id).execute()
        assert.equal(made.length, 1)
      })

      it('leaves an order item in error when the hypervisor refuses it', async () => {
        const { orderId } = await t.ctx.services.orders.createOrder(a.accountId, [
          {
            type: 'vps',
            name: 'nowhere.example.com',
            priceCents: 499,
            details: {
              productId: 'vps-s',
              imageId: 'debian-12',
              hostname: 'nowhere.example.com',
              location: 'ams',
              host: 'rtm-hv01',
            },
          },
        ])
        await drain()
        const order = (await req('GET', `/orders/${orderId}`)).body.data
        assert.equal(order.status, 'error')
        assert.deepEqual(order.services[0].errors, [
          { code: 'vps', description: 'The hypervisor refused the action: No host available in ams' },
        ])
      })

      it('answers the first order again for a repeated Idempotency-Key', async () => {
        const body = { product_id: 'vps-s', image_id: 'debian-12', hostname: 'idem.example.com' }
        const headers = { 'idempotency-key': `vps-order-${dialect}` }
        const one = await t.request('POST', '/vps/order', { key: a.key, body, headers })
        const two = await t.request('POST', '/vps/order', { key: a.key, body, headers })
        assert.equal(one.status, 200)
        assert.deepEqual(two.body, one.body)
      })

      it('refuses unknown products, images, locations, durations and hostnames', async () => {
        const base = { product_id: 'vps-s', image_id: 'debian-12', hostname: 'x.example.com' }
        const cases: Array<[object, string]> = [
          [{ product_id: 'vps-huge' }, 'Unknown product_id: see GET /vps/products'],
          [{ image_id: 'os2-warp' }, 'Unknown image_id: see GET /vps/images'],
          [{ product_id: 'vps-xl', location: 'rtm' }, 'Invalid location: this product is offered in ams'],
          [{ duration: 5 }, 'Invalid duration: one of 1, 3, 6, 12, 24 months'],
          [
            { hostname: 'bad_host' },
            'Invalid hostname: labels of letters, digits and hyphens, at most 63 characters each and 253 in all (RFC 1123)',
          ],
          [{ ssh_key_ids: [424242] }, 'Unknown SSH key id 424242: see GET /vps/ssh-keys'],
        ]
        for (const [over, text] of cases)
          assert.deepEqual((await req('POST', '/vps/order', { ...base, ...over })).body, bad(text), text)
      })
    })
  })
})
