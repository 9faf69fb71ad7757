import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import type { BuiltinHypervisor } from '../src/drivers/hypervisor/builtin.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeVps } from './helpers/fixtures/vps.js'

// Listing, details, access and power tasks of VPS; the other VPS operations: vps-manage, vps-resources.
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
    })
  })
})
