import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../clock.js'
import { ConfigError, loadConfig } from '../../config/config.js'
import { forEachDialect, startTestApp, type TestApp } from '../../../test/helpers/app.js'
import { HypervisorError, type HypervisorDriver, type InstanceSpec } from './hypervisor.js'
import { BuiltinHypervisor } from './builtin.js'
import { ownTables } from '../../db/database.js'
import { LxdHypervisor } from './lxd.js'
import { describeWithLxd, startLxd, type Lxd } from '../../../test/helpers/lxd.js'

/** What a driver under test needs: the driver, a clock the suite can move, and teardown. */
export interface ContractSubject {
  driver: HypervisorDriver
  /** Moves time forward (nightly backups); a real hypervisor's suite may skip what needs it. */
  advance?: (ms: number) => void
  /** Has the hypervisor take its nightly backup of `ref` now (a real hypervisor's scheduler, run at once). */
  nightly?: (ref: string) => Promise<void>
  close(): Promise<void>
}

/** The contract every hypervisor driver must pass. */
export function hypervisorContract(name: string, make: () => Promise<ContractSubject>): void {
  describe(`hypervisor contract: ${name}`, () => {
    let s: ContractSubject
    let d: HypervisorDriver
    let location: string
    let image: string
    const spec = (over: Partial<InstanceSpec> = {}): InstanceSpec => ({
      tenant: 'contract',
      location,
      imageId: image,
      hostname: 'contract.example.com',
      cpu: 1,
      memoryMb: 1024,
      diskGb: 20,
      rootPassword: 'Secret-1234567890',
      sshKeys: [],
      ...over,
    })
    const created = async () => {
      const c = await d.createInstance(spec())
      assert.deepEqual(await d.wait(c.operation), { ok: true })
      return c.ref
    }

    before(async () => {
      s = await make()
      d = s.driver
      location = (await d.listHosts())[0].location
      image = (await d.listImages())[0].slug
    })
    after(() => s.close())

    it('lists hosts with locations and images with a unique integer id, slug, name, family and version', async () => {
      const hosts = await d.listHosts()
      assert.ok(hosts.length >= 1)
      for (const h of hosts) assert.ok(h.name && h.location)
      const images = await d.listImages()
      for (const i of images) assert.ok(Number.isInteger(i.id) && i.slug && i.name && i.family && i.version)
      assert.equal(new Set(images.map((i) => i.id)).size, images.length)
      assert.equal(new Set(images.map((i) => i.slug)).size, images.length)
    })

    it('creates an instance that runs once its operation ends, with addresses and a host', async () => {
      const c = await d.createInstance(spec())
      assert.match(c.ipv4, /^\d+\.\d+\.\d+\.\d+$/)
      assert.ok(c.ipv6.includes(':'))
      assert.ok((await d.listHosts()).some((h) => h.name === c.host))
      const progress: number[] = []
      assert.deepEqual(
        await d.wait(c.operation, (p) => {
          progress.push(p)
        }),
        { ok: true },
      )
      for (const p of progress) assert.ok(p >= 0 && p <= 100)
      const state = await d.getInstance(c.ref)
      assert.equal(state?.power, 'running')
      assert.equal(state?.rescue, false)
      assert.equal(state?.imageId, image)
      assert.equal(await d.getInstance('999999999'), null)
    })

    it('places an instance on the host asked for, and refuses an unknown image', async () => {
      const host = (await d.listHosts()).at(-1)!
      const c = await d.createInstance(spec({ location: host.location, host: host.name }))
      assert.equal(c.host, host.name)
      await d.wait(c.operation)
      await assert.rejects(d.createInstance(spec({ imageId: 'no-such-image' })), HypervisorError)
    })

    it('stops, starts, reboots and powers off, refusing actions that do not fit the power state', async () => {
      const ref = await created()
      await assert.rejects(d.start(ref), HypervisorError)
      assert.deepEqual(await d.wait(await d.shutdown(ref, { timeoutSeconds: 60 })), { ok: true })
      assert.equal((await d.getInstance(ref))?.power, 'stopped')
      await assert.rejects(d.shutdown(ref, { timeoutSeconds: 60 }), HypervisorError)
      await assert.rejects(d.powerOff(ref), HypervisorError)
      await assert.rejects(d.reboot(ref), HypervisorError)
      assert.deepEqual(await d.wait(await d.start(ref)), { ok: true })
      assert.equal((await d.getInstance(ref))?.power, 'running')
      assert.deepEqual(await d.wait(await d.reboot(ref)), { ok: true })
      assert.equal((await d.getInstance(ref))?.power, 'running')
      assert.deepEqual(await d.wait(await d.powerOff(ref)), { ok: true })
      assert.equal((await d.getInstance(ref))?.power, 'stopped')
    })

    it('boots into rescue and back, and reinstalls from another image', async () => {
      const ref = await created()
      assert.deepEqual(await d.wait(await d.setRescue(ref, true, 'Rescue-123456789')), { ok: true })
      assert.deepEqual(
        { ...(await d.getInstance(ref)), ref: undefined, host: undefined, hostname: undefined },
        { ref: undefined, host: undefined, hostname: undefined, power: 'running', rescue: true, imageId: image },
      )
      await assert.rejects(d.setRootPassword(ref, 'x'.repeat(20)), HypervisorError)
      assert.deepEqual(await d.wait(await d.setRescue(ref, false, null)), { ok: true })
      assert.equal((await d.getInstance(ref))?.rescue, false)
      const other = (await d.listImages()).at(-1)!.slug
      assert.deepEqual(await d.wait(await d.reinstall(ref, other, { rootPassword: 'New-12345678901', sshKeys: [] })), {
        ok: true,
      })
      assert.equal((await d.getInstance(ref))?.imageId, other)
      await d.setRootPassword(ref, 'Another-123456789')
    })

    it('sets the hostname, reverse DNS of its own addresses only, the firewall and private networks', async () => {
      const c = await d.createInstance(spec())
      await d.wait(c.operation)
      await d.setHostname(c.ref, 'renamed.example.com')
      assert.equal((await d.getInstance(c.ref))?.hostname, 'renamed.example.com')
      await d.setReverseDns(c.ref, c.ipv4, 'mail.example.com')
      await d.setReverseDns(c.ref, c.ipv4, '')
      await assert.rejects(d.setReverseDns(c.ref, '192.0.2.1', 'x.example.com'), HypervisorError)
      await d.setFirewall(c.ref, {
        enabled: true,
        rules: [{ direction: 'in', protocol: 'tcp', port: '22', source: '0.0.0.0/0', description: 'ssh' }],
      })
      await d.attachNetwork(c.ref, { networkId: 1, cidr: '10.0.0.0/24', gateway: '10.0.0.1', address: '10.0.0.2' })
    })

    it('makes manual backups with a numeric timestamp token and restores them', async () => {
      const ref = await created()
      assert.deepEqual(await d.wait(await d.createBackup(ref)), { ok: true })
      const list = await d.listBackups(ref)
      const manual = list.filter((b) => b.type === 'manual')
      assert.equal(manual.length, 1)
      assert.match(manual[0].dateInternal, /^\d{9,}$/)
      assert.ok(manual[0].sizeMb > 0)
      assert.deepEqual(await d.wait(await d.restoreBackup(ref, manual[0].key)), { ok: true })
      assert.equal((await d.getInstance(ref))?.power, 'running')
      await assert.rejects(d.restoreBackup(ref, 987654321), HypervisorError)
    })

    it('keeps nightly incremental backups with a YYYYMMDD token, newest first, at most seven', async (t) => {
      if (!s.advance && s.nightly) {
        // Time stands still: the hypervisor's own nightly is taken at once, and listed as an incremental backup.
        const ref = await created()
        assert.deepEqual(await d.wait(await d.createBackup(ref)), { ok: true })
        await s.nightly(ref)
        const list = await d.listBackups(ref)
        assert.deepEqual(list.map((b) => b.type).sort(), ['incremental', 'manual'])
        const inc = list.find((b) => b.type === 'incremental')!
        assert.match(inc.dateInternal, /^20\d{6}$/)
        assert.ok(inc.sizeMb > 0)
        assert.deepEqual(await d.wait(await d.restoreBackup(ref, inc.key)), { ok: true })
        return
      }
      if (!s.advance) return t.skip('the driver cannot move time')
      const ref = await created()
      const version = d.backupsVersion()
      s.advance(10 * 86_400_000)
      // A cached list is reused only while the version holds: new nightlies must change it.
      if (version !== null) assert.notEqual(d.backupsVersion(), version)
      const list = await d.listBackups(ref)
      const inc = list.filter((b) => b.type === 'incremental')
      assert.equal(inc.length, 7)
      for (const b of inc) assert.match(b.dateInternal, /^20\d{6}$/)
      const times = list.map((b) => b.createdAt.getTime())
      assert.deepEqual(
        times,
        [...times].sort((x, y) => y - x),
      )
      assert.deepEqual(
        (await d.listBackups(ref)).map((b) => b.key),
        list.map((b) => b.key),
      )
      // Seven at every hour of the day for a fresh instance, before the nightly hour too (a window of
      // three hours or more always holds one of twelve points two hours apart).
      for (let i = 0; i < 12; i++) {
        s.advance(2 * 3_600_000)
        const other = await created()
        s.advance(10 * 86_400_000)
        assert.equal((await d.listBackups(other)).filter((b) => b.type === 'incremental').length, 7, `at step ${i}`)
      }
    })

    it('reserves, routes, unroutes and releases floating addresses', async () => {
      const c = await d.createInstance(spec())
      await d.wait(c.operation)
      const ip = await d.reserveFloatingIp(location)
      const ip2 = await d.reserveFloatingIp(location)
      assert.notEqual(ip, ip2)
      await d.routeFloatingIp(ip, c.ref)
      await d.setReverseDns(c.ref, ip, 'floating.example.com')
      await d.routeFloatingIp(ip, null)
      await d.releaseFloatingIp(ip)
      await assert.rejects(d.routeFloatingIp(ip, c.ref), HypervisorError)
    })

    it('destroys an instance', async () => {
      const ref = await created()
      await d.destroyInstance(ref)
      assert.equal(await d.getInstance(ref), null)
    })
  })
}

// The built-in simulator, on each dialect, plus what only the simulator can do: fault injection.
forEachDialect((dialect) => {
  const clock = new ManualClock()
  let app: TestApp
  hypervisorContract(`builtin (${dialect})`, async () => {
    app = await startTestApp(dialect, { env: { HOSTAPI_SIM_SPEED: '1000000' }, clock })
    return { driver: app.ctx.drivers.hypervisor, advance: (ms) => clock.advance(ms), close: () => app.close() }
  })

  describe(`builtin hypervisor simulation (${dialect})`, () => {
    let t: TestApp
    let d: BuiltinHypervisor
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_SIM_SPEED: '1000000' } })
      d = t.ctx.drivers.hypervisor as BuiltinHypervisor
    })
    after(() => t.close())
    const make = async () => {
      const c = await d.createInstance({
        tenant: '1',
        location: 'ams',
        imageId: 'debian-12',
        hostname: 'sim.example.com',
        cpu: 1,
        memoryMb: 1024,
        diskGb: 20,
        rootPassword: 'Secret-1234567890',
        sshKeys: [],
      })
      await d.wait(c.operation)
      return c.ref
    }

    it('times out a graceful stop of a guest that ignores ACPI, and the guest keeps running', async () => {
      const ref = await make()
      await d.simulate(ref, { ignoresShutdown: true })
      const result = await d.wait(await d.shutdown(ref, { timeoutSeconds: 30 }))
      assert.deepEqual(result, { ok: false, error: 'The guest did not shut down within 30 seconds; use power off' })
      assert.equal((await d.getInstance(ref))?.power, 'running')
      assert.deepEqual(await d.wait(await d.powerOff(ref)), { ok: true })
      assert.equal((await d.getInstance(ref))?.power, 'stopped')
    })

    it('fails the next operation when told to, once, without changing the instance', async () => {
      const ref = await make()
      await d.simulate(ref, { failNext: 'Disk controller error' })
      assert.deepEqual(await d.wait(await d.reboot(ref)), { ok: false, error: 'Disk controller error' })
      assert.equal((await d.getInstance(ref))?.power, 'running')
      assert.deepEqual(await d.wait(await d.reboot(ref)), { ok: true })
    })

    it('applies an operation once when several waiters follow it', async () => {
      const ref = await make()
      const op = await d.createBackup(ref)
      const results = await Promise.all([d.wait(op), d.wait(op), d.wait(op)])
      assert.deepEqual(results, [{ ok: true }, { ok: true }, { ok: true }])
      assert.equal((await d.listBackups(ref)).filter((b) => b.type === 'manual').length, 1)
    })

    it('takes realistic time at speed 1, divided by the speed multiplier', async () => {
      const slow = new BuiltinHypervisor(ownTables(t.ctx.db), t.ctx.clock, { speed: 1 })
      const ref = await make()
      const op = await slow.reboot(ref)
      const row = await t.ctx.db
        .selectFrom('hv_operations')
        .selectAll()
        .where('id', '=', Number(op.ref))
        .executeTakeFirstOrThrow()
      assert.equal(row.duration_ms, 25_000)
      const fast = new BuiltinHypervisor(ownTables(t.ctx.db), t.ctx.clock, { speed: 1000 })
      const row2 = await t.ctx.db
        .selectFrom('hv_operations')
        .selectAll()
        .where('id', '=', Number((await fast.createBackup(ref)).ref))
        .executeTakeFirstOrThrow()
      assert.equal(row2.duration_ms, 45)
    })
  })
})

// The LXD driver against a real lxd of the test's own (containers: the test machines have no KVM).
describeWithLxd('hypervisor contract on a real LXD', () => {
  let lxd: Lxd
  hypervisorContract('lxd', async () => {
    lxd = await startLxd()
    const driver = new LxdHypervisor({
      url: lxd.socket,
      project: 'default',
      storagePool: lxd.pool,
      network: lxd.network,
      instanceType: 'container',
      location: 'ams',
      floatingIps: ['198.51.100.10', '198.51.100.11', '198.51.100.12'],
      privateNetworkPrefix: `hv${lxd.network.slice(-6)}n`,
      tenantSubnets: lxd.tenantSubnets,
      tenantPrefix: 24,
    })
    return {
      driver,
      // LXD's scheduler names a snapshot after the instance's snapshots.pattern; `lxc snapshot` without a name does too.
      nightly: async (ref) => {
        await lxd.lxc('snapshot', ref)
      },
      close: async () => {
        driver.close()
        await lxd.close()
      },
    }
  })
})

describe('hypervisor configuration', () => {
  it('reads HOSTAPI_SIM_SPEED (a positive multiplier, default 1) and HOSTAPI_VPS_SHUTDOWN_TIMEOUT', () => {
    assert.deepEqual(loadConfig({}).hypervisor, {
      driver: 'builtin',
      simSpeed: 1,
      shutdownTimeoutSeconds: 120,
      lxd: null,
    })
    assert.equal(loadConfig({ HOSTAPI_SIM_SPEED: '60' }).hypervisor.simSpeed, 60)
    assert.equal(loadConfig({ HOSTAPI_SIM_SPEED: '0.5' }).hypervisor.simSpeed, 0.5)
    for (const bad of ['0', '-2', 'fast', '1e12']) {
      assert.throws(
        () => loadConfig({ HOSTAPI_SIM_SPEED: bad }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.problems.includes(`HOSTAPI_SIM_SPEED must be a number above 0 and at most 1000000000 (got "${bad}")`),
      )
    }
    assert.throws(() => loadConfig({ HOSTAPI_VPS_SHUTDOWN_TIMEOUT: '0' }), ConfigError)
  })

  it('reads the LXD settings (HOSTAPI_HYPERVISOR_DRIVER=lxd) with their defaults, and reports bad ones', () => {
    assert.deepEqual(loadConfig({ HOSTAPI_HYPERVISOR_DRIVER: 'lxd' }).hypervisor.lxd, {
      url: '/var/lib/lxd/unix.socket',
      clientCertFile: null,
      clientKeyFile: null,
      caFile: null,
      project: 'default',
      storagePool: 'default',
      network: 'lxdbr0',
      instanceType: 'container',
      location: 'ams',
      floatingIps: [],
      privateNetworkPrefix: 'hvpc',
      tenantSubnets: '10.144.0.0/12',
      tenantPrefix: 24,
    })
    const c = loadConfig({
      HOSTAPI_HYPERVISOR_DRIVER: 'lxd',
      HOSTAPI_LXD_INSTANCE_TYPE: 'virtual-machine',
      HOSTAPI_LXD_FLOATING_IPS: '192.0.2.8/30, 198.51.100.7',
    }).hypervisor.lxd
    assert.equal(c?.instanceType, 'virtual-machine')
    assert.deepEqual(c?.floatingIps, ['192.0.2.9', '192.0.2.10', '198.51.100.7'])
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env)
        return []
      } catch (e) {
        return (e as ConfigError).problems
      }
    }
    assert.deepEqual(problems({ HOSTAPI_LXD_URL: '/x' }), [
      'HOSTAPI_LXD_URL apply to HOSTAPI_HYPERVISOR_DRIVER=lxd only',
    ])
    assert.deepEqual(problems({ HOSTAPI_HYPERVISOR_DRIVER: 'kvm' }), [
      'HOSTAPI_HYPERVISOR_DRIVER must be builtin or lxd (got "kvm")',
    ])
    assert.deepEqual(problems({ HOSTAPI_HYPERVISOR_DRIVER: 'lxd', HOSTAPI_LXD_URL: 'https://lxd.example:8443' }), [
      'HOSTAPI_LXD_CLIENT_CERT and HOSTAPI_LXD_CLIENT_KEY must be set for an https:// HOSTAPI_LXD_URL',
    ])
    assert.deepEqual(problems({ HOSTAPI_HYPERVISOR_DRIVER: 'lxd', HOSTAPI_LXD_INSTANCE_TYPE: 'vm' }), [
      'HOSTAPI_LXD_INSTANCE_TYPE must be container or virtual-machine (got "vm")',
    ])
    assert.equal(problems({ HOSTAPI_HYPERVISOR_DRIVER: 'lxd', HOSTAPI_LXD_FLOATING_IPS: '10.0.0.0/8' }).length, 1)
    assert.deepEqual(
      problems({
        HOSTAPI_HYPERVISOR_DRIVER: 'lxd',
        HOSTAPI_LXD_TENANT_SUBNETS: '10.0.0.0/8',
        HOSTAPI_LXD_TENANT_PREFIX: '25',
      }),
      ['HOSTAPI_LXD_TENANT_PREFIX must leave at most 65536 subnets of HOSTAPI_LXD_TENANT_SUBNETS (got /8 and /25)'],
    )
    assert.equal(problems({ HOSTAPI_HYPERVISOR_DRIVER: 'lxd', HOSTAPI_LXD_TENANT_SUBNETS: 'fd00::/8' }).length, 1)
  })
})
