import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, generateKeyPairSync } from 'node:crypto'
import sshpk from 'sshpk'
import { ManualClock } from '../src/clock.js'
import type { BuiltinHypervisor } from '../src/drivers/hypervisor/builtin.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { addMonths } from '../src/modules/vps/vps-lifecycle.service.js'

const sshKey = (type: 'ed25519' | 'rsa' | 'ec', bits = 2048, comment = 'test') => {
  const { publicKey } =
    type === 'rsa'
      ? generateKeyPairSync('rsa', {
          modulusLength: bits,
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        })
      : type === 'ec'
        ? generateKeyPairSync('ec', {
            namedCurve: 'P-256',
            publicKeyEncoding: { type: 'spki', format: 'pem' },
            privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
          })
        : generateKeyPairSync('ed25519', {
            publicKeyEncoding: { type: 'spki', format: 'pem' },
            privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
          })
  return `${sshpk.parseKey(publicKey, 'pem').toString('ssh')} ${comment}`
}
/** The OpenSSH SHA256 fingerprint, computed independently of the server: base64 of the SHA-256 of the key blob, unpadded. */
const fingerprintOf = (line: string) =>
  `SHA256:${createHash('sha256')
    .update(Buffer.from(line.split(' ')[1], 'base64'))
    .digest('base64')
    .replace(/=+$/, '')}`

forEachDialect((dialect) => {
  describe(`VPS over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
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
      b = await t.account('Other Tenant')
    })
    after(() => t.close())

    describe('instances', () => {
      it("lists the account's VPS only, with the documented fields", async () => {
        const id = await makeVps(t, a, { hostname: 'web1.example.com', settle: true })
        await makeVps(t, b, { settle: true })
        const r = await req('GET', '/vps')
        assert.equal(r.status, 200)
        const mine = r.body.data.vps.find((v: { id: number }) => v.id === id)
        assert.deepEqual(Object.keys(mine).sort(), [
          'created',
          'hostname',
          'id',
          'ipv4',
          'ipv6',
          'location',
          'name',
          'product',
          'status',
        ])
        assert.equal(mine.hostname, 'web1.example.com')
        assert.equal(mine.name, 'web1')
        assert.equal(mine.status, 'running')
        assert.match(mine.created, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/)
        const others = await t.ctx.db.selectFrom('vps').select('id').where('account_id', '=', b.accountId).execute()
        for (const o of others) assert.ok(!r.body.data.vps.some((v: { id: number }) => v.id === o.id))
      })

      it('shows details: specs, image, addresses with reverse names, status, rescue, tasks, lock and cancellation', async () => {
        const id = await makeVps(t, a, { hostname: 'db1.example.com', productId: 'vps-m' })
        const installing = (await req('GET', `/vps/${id}`)).body.data
        assert.equal(installing.status, 'installing')
        assert.equal(installing.vps_locked, true)
        assert.equal(installing.tasks.length, 1)
        assert.equal(installing.tasks[0].action, 'create')
        assert.equal(installing.tasks[0].status, 'queued')
        await drain()
        const d = (await req('GET', `/vps/${id}`)).body.data
        assert.deepEqual(d.specs, { cpu: 2, memory_mb: 4096, disk_gb: 80 })
        assert.deepEqual(d.image, { id: 1, slug: 'debian-12', name: 'Debian 12 (Bookworm)' })
        assert.equal(d.status, 'running')
        assert.equal(d.rescue, false)
        assert.equal(d.vps_locked, false)
        assert.deepEqual(d.tasks, [])
        assert.equal(d.cancellation_date, null)
        assert.equal(d.ips.length, 2)
        assert.deepEqual(
          d.ips.map((i: { version: number }) => i.version),
          [4, 6],
        )
        for (const ip of d.ips) assert.equal(ip.reverse, 'db1.example.com')
      })

      it("answers `No valid VPS ID provided` for a malformed id and `No access to this VPS` alike for an unknown id and another account's", async () => {
        const other = await makeVps(t, b)
        for (const path of ['/vps/abc', '/vps/12abc', '/vps/-1']) {
          assert.deepEqual((await req('GET', path)).body, bad('No valid VPS ID provided'), path)
        }
        for (const [m, p, body] of [
          ['GET', ''],
          ['POST', '/start'],
          ['PUT', '/hostname', { hostname: 'x.example.com' }],
          ['DELETE', ''],
          ['GET', '/firewall'],
        ] as const) {
          const foreign = await req(m, `/vps/${other}${p}`, body)
          const unknown = await req(m, `/vps/${other + 1000}${p}`, body)
          assert.deepEqual(foreign.body, bad('No access to this VPS'), `${m} ${p}`)
          assert.deepEqual(
            { status: unknown.status, body: unknown.body },
            { status: foreign.status, body: foreign.body },
            `${m} ${p}`,
          )
        }
      })

      it('lets a sub-user with the vps permission in, and answers others `No access to this VPS`', async () => {
        const id = await makeVps(t, a, { settle: true })
        const withVps = await t.subUser(a, { vps: true })
        const without = await t.subUser(a, { domains: true })
        assert.equal((await req('GET', `/vps/${id}`, undefined, withVps.key)).status, 200)
        assert.equal((await req('POST', `/vps/${id}/restart`, undefined, withVps.key)).status, 200)
        await drain()
        for (const p of ['/vps', `/vps/${id}`, `/vps/${id}/backups`, '/vps/ssh-keys']) {
          const r = await req('GET', p, undefined, without.key)
          assert.equal(r.status, 400)
          assert.deepEqual(r.body, bad('No access to this VPS'))
        }
      })

      it('runs power tasks through transitional states and records them', async () => {
        const id = await makeVps(t, a, { settle: true })
        const stop = await req('POST', `/vps/${id}/stop`)
        assert.equal(stop.status, 200)
        assert.equal(stop.body.status_description, 'Task queued')
        assert.deepEqual(Object.keys(stop.body.data.task).sort(), [
          'action',
          'created',
          'error',
          'id',
          'progress',
          'status',
        ])
        assert.equal(stop.body.data.task.action, 'stop')
        assert.equal(stop.body.data.task.progress, 0)
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'stopping')
        assert.deepEqual((await req('POST', `/vps/${id}/start`)).body, bad('VPS is locked by a running task'))
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'stopped')
        assert.equal((await req('POST', `/vps/${id}/start`)).status, 200)
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'starting')
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
        const state = await hv().getInstance(await refOf(id))
        assert.equal(state?.power, 'running')
      })

      it('fails a graceful stop that times out, leaves the VPS running, and powers it off instead', async () => {
        const id = await makeVps(t, a, { settle: true })
        await hv().simulate(await refOf(id), { ignoresShutdown: true })
        const stop = await req('POST', `/vps/${id}/stop`)
        await drain()
        const task = await t.ctx.db
          .selectFrom('vps_tasks')
          .selectAll()
          .where('id', '=', stop.body.data.task.id)
          .executeTakeFirstOrThrow()
        assert.equal(task.status, 'failed')
        assert.match(task.error!, /did not shut down within 120 seconds; use power off/)
        const d = (await req('GET', `/vps/${id}`)).body.data
        assert.equal(d.status, 'running')
        assert.equal(d.vps_locked, false)
        assert.equal((await req('POST', `/vps/${id}/poweroff`)).status, 200)
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'stopped')
      })

      it('reads the state back from the hypervisor when a power task fails', async () => {
        const id = await makeVps(t, a, { settle: true })
        await hv().simulate(await refOf(id), { failNext: 'Host unreachable' })
        const r = await req('POST', `/vps/${id}/restart`)
        await drain()
        const task = await t.ctx.db
          .selectFrom('vps_tasks')
          .selectAll()
          .where('id', '=', r.body.data.task.id)
          .executeTakeFirstOrThrow()
        assert.deepEqual([task.status, task.error], ['failed', 'Host unreachable'])
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
      })

      it('resumes a task whose worker died while waiting, without starting the operation again', async () => {
        const id = await makeVps(t, a, { settle: true })
        const stop = await req('POST', `/vps/${id}/stop`)
        // What a worker leaves behind when it dies after starting the operation: the task running, the operation recorded.
        const op = await hv().shutdown(await refOf(id), { timeoutSeconds: 120 })
        await t.ctx.db
          .updateTable('vps_tasks')
          .set({ status: 'running', attempts: 1, operation_ref: op.ref })
          .where('id', '=', stop.body.data.task.id)
          .execute()
        await drain()
        const task = await t.ctx.db
          .selectFrom('vps_tasks')
          .selectAll()
          .where('id', '=', stop.body.data.task.id)
          .executeTakeFirstOrThrow()
        assert.deepEqual([task.status, task.attempts], ['done', 2])
        const ops = await t.ctx.db
          .selectFrom('hv_operations')
          .select('id')
          .where('instance_id', '=', Number(await refOf(id)))
          .where('action', '=', 'shutdown')
          .execute()
        assert.equal(ops.length, 1)
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'stopped')
      })

      it('retries a task that crashed, and after the last attempt fails it and frees the VPS in the state the hypervisor reports', async () => {
        const id = await makeVps(t, a, { settle: true })
        const driver = hv()
        const realWait = driver.wait
        driver.wait = async () => {
          throw new Error('hypervisor API connection reset')
        }
        try {
          const r = await req('POST', `/vps/${id}/restart`)
          // 16 attempts (a hypervisor may be away for a while), backing off up to 5 minutes.
          for (let i = 0; i < 16; i++) {
            await drain()
            clock.advance(300_000)
          }
          const task = await t.ctx.db
            .selectFrom('vps_tasks')
            .selectAll()
            .where('id', '=', r.body.data.task.id)
            .executeTakeFirstOrThrow()
          assert.equal(task.status, 'failed')
          assert.equal(task.attempts, 16)
          assert.equal(task.error, 'The task could not be run: hypervisor API connection reset')
          const job = await t.ctx.db
            .selectFrom('jobs')
            .selectAll()
            .where('id', '=', task.job_id!)
            .executeTakeFirstOrThrow()
          assert.deepEqual([job.status, job.attempts], ['failed', 16])
        } finally {
          driver.wait = realWait
        }
        const d = (await req('GET', `/vps/${id}`)).body.data
        assert.deepEqual([d.status, d.vps_locked], ['running', false])
        assert.equal((await req('POST', `/vps/${id}/stop`)).status, 200)
        await drain()
      })

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

    describe('backups', () => {
      it('lists backups in `details` (no `data`) with both date_internal forms', async () => {
        const id = await makeVps(t, a, { settle: true })
        const empty = await req('GET', `/vps/${id}/backups`)
        assert.deepEqual(empty.body, {
          status: 200,
          status_description: 'Request successful',
          details: { backups: [], count: 0 },
        })
        const task = await req('POST', `/vps/${id}/backups`)
        assert.equal(task.body.data.task.action, 'backup')
        await drain()
        clock.advance(2 * 86_400_000)
        const r = await req('GET', `/vps/${id}/backups`)
        assert.equal(r.status, 200)
        assert.deepEqual(Object.keys(r.body).sort(), ['details', 'status', 'status_description'])
        const { backups, count } = r.body.details
        assert.equal(count, backups.length)
        const manual = backups.filter((x: { type: string }) => x.type === 'manual')
        const inc = backups.filter((x: { type: string }) => x.type === 'incremental')
        assert.equal(manual.length, 1)
        assert.ok(inc.length >= 1)
        assert.match(manual[0].date_internal, /^\d{10}$/)
        for (const x of inc) assert.match(x.date_internal, /^\d{8}$/)
        for (const x of backups) {
          assert.deepEqual(Object.keys(x).sort(), ['date', 'date_internal', 'key', 'size', 'type'])
          assert.match(x.date, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/)
          assert.ok(Number.isInteger(x.key))
          assert.equal(typeof x.size, 'number')
        }
        assert.equal(inc[0].date.slice(11), '03:00')
        assert.equal(inc[0].date_internal, inc[0].date.slice(0, 10).replace(/-/g, ''))
      })

      it("answers the spec's errors on list backups", async () => {
        const other = await makeVps(t, b)
        assert.deepEqual((await req('GET', '/vps/notanumber/backups')).body, bad('No valid VPS ID provided'))
        assert.deepEqual((await req('GET', '/vps/424242424/backups')).body, bad('No access to this VPS'))
        assert.deepEqual((await req('GET', `/vps/${other}/backups`)).body, bad('No access to this VPS'))
        const noVps = await t.subUser(a, { account: true })
        const mine = await makeVps(t, a)
        assert.deepEqual(
          (await req('GET', `/vps/${mine}/backups`, undefined, noVps.key)).body,
          bad('No access to this VPS'),
        )
        const bearer = await t.request('GET', `/vps/${mine}/backups`, { headers: { authorization: `Bearer ${a.key}` } })
        assert.equal(bearer.status, 200)
      })

      it('restores a backup by key (and type), refusing unknown keys', async () => {
        const id = await makeVps(t, a, { settle: true })
        await req('POST', `/vps/${id}/backups`)
        await drain()
        const [backup] = (await req('GET', `/vps/${id}/backups`)).body.details.backups
        assert.deepEqual(
          (await req('PATCH', `/vps/${id}/backups`, { key: backup.key, type: 'incremental' })).body,
          bad('Backup not found: use a key from GET /vps/{id}/backups'),
        )
        assert.deepEqual(
          (await req('PATCH', `/vps/${id}/backups`, { key: 99999999 })).body,
          bad('Backup not found: use a key from GET /vps/{id}/backups'),
        )
        const r = await req('PATCH', `/vps/${id}/backups`, { key: backup.key, type: 'manual' })
        assert.equal(r.body.data.task.action, 'restore')
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'restoring')
        await drain()
        assert.equal((await req('GET', `/vps/${id}`)).body.data.status, 'running')
      })
    })

    describe('SSH keys', () => {
      it('adds ed25519, ecdsa and rsa ≥ 2048 keys with their SHA256 fingerprint, lists and deletes them', async () => {
        for (const [type, bits] of [
          ['ed25519', 256],
          ['ec', 256],
          ['rsa', 2048],
        ] as const) {
          const line = sshKey(type, bits)
          const r = await req('POST', '/vps/ssh-keys', { name: `key-${type}`, public_key: line })
          assert.equal(r.status, 200, JSON.stringify(r.body))
          assert.equal(r.body.data.fingerprint, fingerprintOf(line))
          assert.equal(r.body.data.type, type === 'ec' ? 'ecdsa' : type)
          assert.equal(r.body.data.bits, bits)
        }
        const list = (await req('GET', '/vps/ssh-keys')).body.data.ssh_keys
        assert.ok(list.length >= 3)
        const del = await req('DELETE', `/vps/ssh-keys/${list[0].id}`)
        assert.deepEqual(del.body, { status: 200, status_description: 'SSH key deleted' })
        assert.deepEqual((await req('DELETE', `/vps/ssh-keys/${list[0].id}`)).body, {
          status: 404,
          status_description: 'SSH key not found',
        })
        assert.ok(
          !(await req('GET', '/vps/ssh-keys', undefined, b.key)).body.data.ssh_keys.some(
            (k: { id: number }) => k.id === list[1].id,
          ),
        )
      })

      it('refuses short RSA keys, garbage, unsupported types and duplicates', async () => {
        assert.deepEqual(
          (await req('POST', '/vps/ssh-keys', { name: 'short', public_key: sshKey('rsa', 1024) })).body,
          bad('RSA keys must have at least 2048 bits'),
        )
        assert.deepEqual(
          (await req('POST', '/vps/ssh-keys', { name: '   ', public_key: sshKey('ed25519') })).body,
          bad('Missing name'),
        )
        const garbage = bad(
          'Invalid public_key: expected one line in OpenSSH format, such as "ssh-ed25519 AAAA… comment"',
        )
        for (const k of ['not a key', 'ssh-ed25519 AAAA', `${sshKey('ed25519')}\n${sshKey('ed25519')}`]) {
          assert.deepEqual((await req('POST', '/vps/ssh-keys', { name: 'x', public_key: k })).body, garbage, k)
        }
        const dsa =
          'ssh-dss AAAAB3NzaC1kc3MAAACBAP1/U4EddRIpUt9KnC7s5Of2EbdSPO9EAMMeP4C2USZpRV1AIlH7WT2NWPq/xfW6MPbLm1Vs14E7gB00b/JmYLdrmVClpJ+f6AR7ECLCT7up1/63xhv4O1fnxqimFQ8E+4P208UewwI1VBNaFpEy9nXzrith1yrv8iIDGZ3RSAHHAAAAFQCXYFCPFSMLzLKSuYKi64QL8Fgc9QAAAIEA9+GghdabPd7LvKtcNrhXuXmUr7v6OuqC+VdMCz0HgmdRWVeOutRZT+ZxBxCBgLRJFnEj6EwoFhO3zwkyjMim4TwWeotUfI0o4KOuHiuzpnWRbqN/C/ohNWLx+2J6ASQ7zKTxvqhRkImog9/hWuWfBpKLZl6Ae1UlZAFMO/7PSSoAAACBAPHnAQpzYCPYj4uAzVUAc/7lSuwFNGPTHtDbvF+ZHm3oA/Hq6vy4CcGpjaz1fzLkbfoj0WQIvLGoQE2tKQaBZTDSqNzVV2H8s1q5a2+YklbyYc0D+0vaWlGNy9QSNvp9X47OPLOUZqRJUGDwCzGdLs2eOyDN/2Q9XN1wJ9Rm7BLm dsa'
        assert.deepEqual(
          (await req('POST', '/vps/ssh-keys', { name: 'dsa', public_key: dsa })).body,
          bad('Unsupported key type: use ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa'),
        )
        const line = sshKey('ed25519', 256, 'first')
        assert.equal((await req('POST', '/vps/ssh-keys', { name: 'once', public_key: line })).status, 200)
        // The same key with another comment is the same key.
        assert.deepEqual(
          (await req('POST', '/vps/ssh-keys', { name: 'twice', public_key: line.replace(/ first$/, ' second') })).body,
          bad('This SSH key has been added already'),
        )
        // Another account may add the same key.
        assert.equal((await req('POST', '/vps/ssh-keys', { name: 'theirs', public_key: line }, b.key)).status, 200)
      })
    })

    describe('firewall', () => {
      it('starts disabled and empty, replaces the rules normalised, at most 50', async () => {
        const id = await makeVps(t, a, { settle: true })
        assert.deepEqual((await req('GET', `/vps/${id}/firewall`)).body.data, { enabled: false, rules: [] })
        const r = await req('PUT', `/vps/${id}/firewall`, {
          enabled: true,
          rules: [
            { direction: 'in', protocol: 'tcp', port: '22', source: '203.0.113.7', description: 'ssh' },
            { protocol: 'tcp', port: '8000-8100', source: '2001:db8::/32' },
            { protocol: 'icmp' },
          ],
        })
        assert.equal(r.status, 200, JSON.stringify(r.body))
        const expected = {
          enabled: true,
          rules: [
            { direction: 'in', protocol: 'tcp', port: '22', source: '203.0.113.7/32', description: 'ssh' },
            { direction: 'in', protocol: 'tcp', port: '8000-8100', source: '2001:db8::/32', description: '' },
            { direction: 'in', protocol: 'icmp', port: null, source: '0.0.0.0/0', description: '' },
          ],
        }
        assert.deepEqual(r.body.data, expected)
        assert.deepEqual((await req('GET', `/vps/${id}/firewall`)).body.data, expected)
        assert.deepEqual((await hv().inspect(await refOf(id)))!.firewall, expected)
        const many = Array.from({ length: 51 }, (_, i) => ({ protocol: 'tcp', port: String(1000 + i) }))
        assert.deepEqual(
          (await req('PUT', `/vps/${id}/firewall`, { enabled: true, rules: many })).body,
          bad('A firewall can have at most 50 rules'),
        )
        assert.equal((await req('PUT', `/vps/${id}/firewall`, { enabled: true, rules: many.slice(0, 50) })).status, 200)
        const cases: Array<[object, string]> = [
          [
            { protocol: 'tcp', port: '70000' },
            'Invalid firewall rule 1: port must be a port (1-65535) or a range such as 8000-8100',
          ],
          [
            { protocol: 'tcp', port: '90-80' },
            'Invalid firewall rule 1: port must be a port (1-65535) or a range such as 8000-8100',
          ],
          [{ protocol: 'icmp', port: '1' }, 'Invalid firewall rule 1: icmp rules have no port'],
          [
            { protocol: 'tcp', source: '10.0.0.300/8' },
            'Invalid firewall rule 1: source must be an IP address or a CIDR range',
          ],
        ]
        for (const [rule, text] of cases)
          assert.deepEqual((await req('PUT', `/vps/${id}/firewall`, { enabled: true, rules: [rule] })).body, bad(text))
        assert.equal(
          (await req('PUT', `/vps/${id}/firewall`, { enabled: true, rules: [{ protocol: 'gre' }] })).status,
          400,
        )
      })
    })

    describe('floating IPs', () => {
      it('reserves, attaches, detaches and deletes; an attached IP cannot be deleted', async () => {
        const id = await makeVps(t, a, { settle: true, location: 'ams' })
        const far = await makeVps(t, a, { settle: true, location: 'rtm' })
        const r = await req('POST', '/vps/floating-ips', { location: 'ams' })
        assert.equal(r.status, 200)
        const f = r.body.data
        assert.equal(f.vps_id, null)
        assert.match(f.ip, /^\d+\.\d+\.\d+\.\d+$/)
        assert.deepEqual(
          (await req('PUT', `/vps/floating-ips/${f.id}/attach`, { vps_id: far })).body,
          bad('The floating IP and the VPS must be in the same location'),
        )
        const at = await req('PUT', `/vps/floating-ips/${f.id}/attach`, { vps_id: id })
        assert.equal(at.body.data.vps_id, id)
        const ips = (await req('GET', `/vps/${id}`)).body.data.ips
        assert.deepEqual(ips[2], { ip: f.ip, version: 4, type: 'floating', reverse: ips[0].reverse })
        assert.equal(
          (await req('PUT', `/vps/${id}`, { 'ip-addresses': [{ ip: f.ip, reverse: 'float.example.com' }] })).status,
          200,
        )
        assert.deepEqual(
          (await req('DELETE', `/vps/floating-ips/${f.id}`)).body,
          bad('The floating IP is attached to a VPS; detach it first'),
        )
        const other = await makeVps(t, a, { settle: true, location: 'ams' })
        assert.deepEqual(
          (await req('PUT', `/vps/floating-ips/${f.id}/attach`, { vps_id: other })).body,
          bad('The floating IP is attached to a VPS; detach it first'),
        )
        assert.equal((await req('PUT', `/vps/floating-ips/${f.id}/detach`)).body.data.vps_id, null)
        assert.deepEqual(
          (await req('PUT', `/vps/floating-ips/${f.id}/detach`)).body,
          bad('The floating IP is not attached to a VPS'),
        )
        assert.deepEqual((await req('DELETE', `/vps/floating-ips/${f.id}`)).body, {
          status: 200,
          status_description: 'Floating IP deleted',
        })
        assert.deepEqual((await req('DELETE', `/vps/floating-ips/${f.id}`)).body, {
          status: 404,
          status_description: 'Floating IP not found',
        })
        assert.deepEqual(
          (await req('POST', '/vps/floating-ips', { location: 'mars' })).body,
          bad('Invalid location: one of ams, rtm'),
        )
        const theirs = (await req('POST', '/vps/floating-ips', { location: 'ams' }, b.key)).body.data
        assert.deepEqual((await req('PUT', `/vps/floating-ips/${theirs.id}/attach`, { vps_id: id })).body, {
          status: 404,
          status_description: 'Floating IP not found',
        })
        const mine = (await req('POST', '/vps/floating-ips', { location: 'ams' })).body.data
        const bVps = await makeVps(t, b, { location: 'ams' })
        assert.deepEqual(
          (await req('PUT', `/vps/floating-ips/${mine.id}/attach`, { vps_id: bVps })).body,
          bad('No access to this VPS'),
        )
        assert.ok(
          (await req('GET', '/vps/floating-ips')).body.data.floating_ips.some((x: { id: number }) => x.id === mine.id),
        )
      })
    })
  })
})
