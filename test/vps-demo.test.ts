import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { dialects, startTestApp, type TestApp } from './helpers/app.js'

for (const dialect of dialects) {
  describe(`VPS demo data (${dialect})`, () => {
    let t: TestApp
    let key: string
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_DEMO: '1' } })
      key = t.server.demoKey!
    })
    after(() => t.close())
    const get = async (path: string) => (await t.request('GET', path, { key })).body

    it('seeds a running and a stopped VPS with backups, an SSH key, a VPC with a subnet and a floating IP', async () => {
      const list = (await get('/vps')).data.vps
      assert.deepEqual(list.map((v: { hostname: string; status: string }) => [v.hostname, v.status]),
        [['web1.demo.example', 'running'], ['db1.demo.example', 'stopped']])
      for (const v of list) {
        const d = (await get(`/vps/${v.id}`)).data
        assert.equal(d.vps_locked, false)
        assert.deepEqual(d.private_networks.map((n: { cidr: string }) => n.cidr), ['10.10.0.0/24'])
        const backups = await get(`/vps/${v.id}/backups`)
        assert.ok(backups.details.count >= 1)
        assert.equal(backups.details.backups[0].type, 'manual')
      }
      assert.equal((await get('/vps/ssh-keys')).data.ssh_keys.length, 1)
      const vpc = (await get(`/vps/${list[0].id}/vpc`)).data
      assert.deepEqual(vpc.subnets.map((s: { name: string; cidr: string }) => [s.name, s.cidr]), [['backend', '10.10.0.0/24']])
      const floating = (await get('/vps/floating-ips')).data.floating_ips
      assert.deepEqual(floating.map((f: { vps_id: number }) => f.vps_id), [list[0].id])
      assert.equal((await get(`/vps/${list[0].id}/firewall`)).data.rules.length, 4)
      // The install jobs queued while seeding find their tasks done.
      await t.ctx.jobs.drain()
      assert.equal((await get(`/vps/${list[1].id}`)).data.status, 'stopped')
    })
  })
}
