import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, type Reply, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeVps } from './helpers/fixtures/vps.js'

// `?test=1` on every mutating VPS call: the normal checks and answer, and nothing stored, queued or done on the hypervisor.
// (Ids in the answers are not asserted: a dry run may or may not number what it would create.)
forEachDialect((dialect) => {
  describe(`VPS dry runs (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_SIM_SPEED: '1000000' } })
      a = await t.account()
    })
    after(() => t.close())

    const TABLES = [
      'vps',
      'vps_tasks',
      'jobs',
      'vps_ssh_keys',
      'vps_vpcs',
      'vps_subnets',
      'vps_subnet_attachments',
      'vps_floating_ips',
      'hv_instances',
      'hv_operations',
      'hv_backups',
      'hv_floating_ips',
      'orders',
      'order_items',
    ] as const
    /** Every row of every table the VPS area writes, so any change shows. */
    const snapshot = async () => {
      const out: Record<string, unknown> = {}
      for (const table of TABLES) out[table] = await t.ctx.db.selectFrom(table).selectAll().orderBy('id').execute()
      return out
    }

    it('checks and answers every mutating call as usual and changes nothing', async () => {
      const id = await makeVps(t, a, { settle: true, host: 'ams-hv01', location: 'ams' })
      const stopped = await makeVps(t, a, { settle: true, host: 'ams-hv01', location: 'ams' })
      await t.request('POST', `/vps/${stopped}/stop`, { key: a.key })
      await t.request('POST', `/vps/${id}/backups`, { key: a.key })
      await t.ctx.jobs.drain()
      const key = (
        await t.request('POST', '/vps/ssh-keys', {
          key: a.key,
          body: {
            name: 'k',
            public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl k',
          },
        })
      ).body.data
      await t.request('POST', `/vps/${id}/vpc`, { key: a.key, body: { name: 'net' } })
      const subnet = (await t.request('POST', `/vps/${id}/vpc/subnets`, { key: a.key, body: { cidr: '10.1.0.0/24' } }))
        .body.data
      const floating = (await t.request('POST', '/vps/floating-ips', { key: a.key, body: { location: 'ams' } })).body
        .data
      const attached = (await t.request('POST', '/vps/floating-ips', { key: a.key, body: { location: 'ams' } })).body
        .data
      await t.request('PUT', `/vps/floating-ips/${attached.id}/attach`, { key: a.key, body: { vps_id: id } })
      const backupKey = (await t.request('GET', `/vps/${id}/backups`, { key: a.key })).body.details.backups[0].key
      const elsewhere = await makeVps(t, a, { settle: true, host: 'ams-hv02', location: 'ams' })
      await t.request('DELETE', `/vps/${stopped}`, { key: a.key })
      const before = await snapshot()
      const detail = (await t.request('GET', `/vps/${id}`, { key: a.key })).body.data

      const call = (method: string, path: string, body?: unknown) =>
        t.request(method, `${path}?test=1`, { key: a.key, body })
      const cases: Array<[string, string, unknown, (data: Reply['body']) => void]> = [
        [
          'POST',
          '/vps/order',
          { product_id: 'vps-s', image_id: 'debian-12', hostname: 'dry.example.com' },
          (d) => assert.ok(Number.isInteger(d.order_id)),
        ],
        [
          'PUT',
          `/vps/${id}`,
          { 'ip-addresses': [{ ip: detail.ips[0].ip, reverse: 'dry.example.com' }] },
          (d) => assert.equal(d.ips[0].reverse, 'dry.example.com'),
        ],
        ['DELETE', `/vps/${id}`, undefined, (d) => assert.match(d.cancellation_date, /^\d{4}-\d{2}-\d{2}$/)],
        [
          'PUT',
          `/vps/${stopped}/cancel-delete`,
          undefined,
          (d) => assert.deepEqual(d, { id: stopped, cancellation_date: null }),
        ],
        [
          'POST',
          `/vps/${elsewhere}/vpc`,
          { name: 'second' },
          (d) => assert.deepEqual([d.name, d.host, d.subnets], ['second', 'ams-hv02', []]),
        ],
        [
          'POST',
          `/vps/${id}/stop`,
          undefined,
          (d) =>
            assert.deepEqual(
              [d.task.action, d.task.status, d.task.progress, d.task.error],
              ['stop', 'queued', 0, null],
            ),
        ],
        ['POST', `/vps/${id}/poweroff`, undefined, (d) => assert.equal(d.task.action, 'poweroff')],
        ['POST', `/vps/${id}/restart`, undefined, (d) => assert.equal(d.task.action, 'restart')],
        ['POST', `/vps/${stopped}/start`, undefined, (d) => assert.equal(d.task.action, 'start')],
        ['PUT', `/vps/${id}/rescue`, { enable: true }, (d) => assert.match(d.rescue_password, /^[A-Za-z0-9]{20}$/)],
        [
          'POST',
          `/vps/${id}/reinstall`,
          { image_id: 'rocky-9', ssh_key_ids: [key.id] },
          (d) => assert.match(d.root_password, /^[A-Za-z0-9]{20}$/),
        ],
        ['POST', `/vps/${id}/reset-password`, undefined, (d) => assert.match(d.root_password, /^[A-Za-z0-9]{20}$/)],
        [
          'PUT',
          `/vps/${id}/hostname`,
          { hostname: 'dry.example.com' },
          (d) => assert.deepEqual(d, { id, hostname: 'dry.example.com' }),
        ],
        ['POST', `/vps/${id}/backups`, undefined, (d) => assert.equal(d.task.action, 'backup')],
        ['PATCH', `/vps/${id}/backups`, { key: backupKey }, (d) => assert.equal(d.task.action, 'restore')],
        [
          'POST',
          '/vps/ssh-keys',
          {
            name: 'dry',
            public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfDqf9/tkQWdrGtyE3T2lSmcFThZGcJ7ZOPUjmYl/VU dry',
          },
          (d) => assert.match(d.fingerprint, /^SHA256:/),
        ],
        ['DELETE', `/vps/ssh-keys/${key.id}`, undefined, () => undefined],
        [
          'PUT',
          `/vps/${id}/firewall`,
          { enabled: true, rules: [{ protocol: 'tcp', port: '22' }] },
          (d) => assert.equal(d.rules.length, 1),
        ],
        [
          'POST',
          `/vps/${stopped}/vpc/subnets`,
          { cidr: '10.2.0.0/28' },
          (d) => assert.deepEqual([d.gateway, d.dhcp_start, d.dhcp_end], ['10.2.0.1', '10.2.0.2', '10.2.0.14']),
        ],
        ['PUT', `/vps/${id}/vpc/subnets/${subnet.id}`, undefined, (d) => assert.equal(d.address, '10.1.0.2')],
        [
          'POST',
          '/vps/floating-ips',
          { location: 'ams' },
          (d) => assert.deepEqual([d.location, d.vps_id], ['ams', null]),
        ],
        ['PUT', `/vps/floating-ips/${floating.id}/attach`, { vps_id: id }, (d) => assert.equal(d.vps_id, id)],
        ['PUT', `/vps/floating-ips/${attached.id}/detach`, undefined, (d) => assert.equal(d.vps_id, null)],
        ['DELETE', `/vps/floating-ips/${floating.id}`, undefined, () => undefined],
      ]
      for (const [method, path, body, check] of cases) {
        const r = await call(method, path, body)
        assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`)
        check(r.body.data)
      }
      // Refusals are the same as without ?test=1.
      assert.deepEqual((await call('POST', `/vps/${stopped}/stop`)).body, {
        status: 400,
        status_description: 'VPS is already stopped',
      })
      assert.deepEqual((await call('POST', `/vps/${id}/vpc`, { name: 'again' })).body, {
        status: 400,
        status_description: "A VPC exists already on this VPS's host",
      })
      assert.deepEqual((await call('DELETE', `/vps/floating-ips/${attached.id}`)).body, {
        status: 400,
        status_description: 'The floating IP is attached to a VPS; detach it first',
      })
      assert.deepEqual(await snapshot(), before)
    })
  })
})
