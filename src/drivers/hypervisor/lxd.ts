import { randomBytes } from 'node:crypto'
import {
  HypervisorError,
  type Backup,
  type FirewallConfig,
  type HypervisorDriver,
  type HypervisorHost,
  type InstanceSpec,
  type InstanceState,
  type Operation,
  type OperationResult,
  type OsImage,
  type PrivateNetwork,
} from './hypervisor.js'
import { LxdClient, LxdError, type LxdConnection } from './lxd-client.js'
import {
  KEY,
  backupsOf,
  execIn,
  freeIpv4,
  imagesOf,
  ipv6For,
  notFound,
  setupScript,
  snapshotName,
  type GuestSetup,
  type LxdInstance,
  vpcsOf,
} from './lxd-parts.js'
import { forwardsOf, putFirewall, refused, releaseFloating, reserveFloating, routeFloating } from './lxd-network.js'
import { attachAcl, tenantNetwork, type TenantSettings } from './lxd-tenant.js'

/** The LXD driver's settings (HOSTAPI_LXD_*). */
export interface LxdSettings extends LxdConnection, TenantSettings {
  storagePool: string
  /** The managed bridge floating IPs (network forwards) live on; instances run on their account's own bridge. */
  network: string
  instanceType: 'container' | 'virtual-machine'
  /** The location (`ams`) of every LXD host, or of every cluster member. */
  location: string
  /** Addresses that floating IPs are taken from (network forwards' listen addresses). */
  floatingIps: string[]
  /** The prefix of the managed networks created for private networks (VPCs). */
  privateNetworkPrefix: string
}

type Kind = 'create' | 'start' | 'stop' | 'poweroff' | 'reboot' | 'rescue' | 'restore' | 'backup'

/** Operation refs: `<kind>|<instance>|<LXD operation id>|<extra>`. */
const opRef = (kind: Kind, name: string, id: string | null, extra = '') => ({
  ref: [kind, name, id ?? '', extra].join('|'),
})
const stopped = (s: string) => s === 'Stopped'

/**
 * The LXD (or Incus) hypervisor: instances are LXD containers or VMs named `hv-<random>` (no customer data in
 * names), created from images the operator imported under the spec's slugs; power actions are LXD state changes,
 * backups are snapshots, floating IPs are network forwards, firewalls are network ACLs.
 */
export class LxdHypervisor implements HypervisorDriver {
  readonly name = 'lxd'
  private readonly lxd: LxdClient
  /** Allocation of addresses is serialized within the process; LXD refuses an address already in use. */
  private allocating: Promise<unknown> = Promise.resolve()

  constructor(private readonly s: LxdSettings) {
    this.lxd = new LxdClient(s)
  }

  close(): void {
    this.lxd.close()
  }

  async listHosts(): Promise<HypervisorHost[]> {
    const server = await this.lxd.get<{ environment: { server_name: string; server_clustered: boolean } }>('/1.0')
    if (!server.environment.server_clustered)
      return [{ name: server.environment.server_name, location: this.s.location }]
    const members = await this.lxd.get<{ server_name: string }[]>('/1.0/cluster/members?recursion=1')
    return members.map((m) => ({ name: m.server_name, location: this.s.location }))
  }

  async listImages(): Promise<OsImage[]> {
    return imagesOf(await this.lxd.get('/1.0/images?recursion=1'))
  }

  async createInstance(spec: InstanceSpec) {
    const images = await this.listImages()
    if (!images.some((i) => i.slug === spec.imageId)) throw new HypervisorError(`Unknown image ${spec.imageId}`)
    const hosts = await this.listHosts()
    const host = spec.host ? hosts.find((h) => h.name === spec.host) : hosts[0]
    if (!host || host.location !== spec.location) throw new HypervisorError(`No host available in ${spec.location}`)
    const name = `hv-${randomBytes(6).toString('hex')}`
    const setup: GuestSetup = { hostname: spec.hostname, password: spec.rootPassword, sshKeys: spec.sshKeys }
    const { id, ipv4, ipv6 } = await this.serialized(async () => {
      const network = (await tenantNetwork(this.lxd, this.s, spec.tenant)).name
      const { ipv4, ipv6 } = await this.allocate(network)
      const id = await this.lxd.call(
        'POST',
        `/1.0/instances${hosts.length > 1 ? `?target=${encodeURIComponent(host.name)}` : ''}`,
        {
          name,
          type: this.s.instanceType,
          source: { type: 'image', alias: spec.imageId },
          config: {
            'limits.cpu': String(spec.cpu),
            'limits.memory': `${spec.memoryMb}MiB`,
            'snapshots.schedule': '@daily',
            'snapshots.pattern': 'nightly-{{ creation_date|date:"20060102" }}',
            'snapshots.expiry': '7d',
            [KEY.image]: spec.imageId,
            [KEY.hostname]: spec.hostname,
            [KEY.setup]: JSON.stringify(setup),
          },
          devices: {
            root: { type: 'disk', path: '/', pool: this.s.storagePool, size: `${spec.diskGb}GiB` },
            eth0: {
              type: 'nic',
              network,
              'ipv4.address': ipv4,
              ...(ipv6 ? { 'ipv6.address': ipv6 } : {}),
            },
          },
        },
      )
      // Open until the customer sets a firewall: the instance's ACL allows everything to its addresses.
      await putFirewall(this.lxd, name, { enabled: false, rules: [] }, [ipv4, ipv6])
      await attachAcl(this.lxd, network, name, true)
      return { id, ipv4, ipv6 }
    }).catch((err) => refused(err))
    return { ref: name, host: host.name, ipv4, ipv6, operation: opRef('create', name, id) }
  }

  async getInstance(ref: string): Promise<InstanceState | null> {
    const i = await this.find(ref)
    if (!i) return null
    return {
      ref,
      host: i.location && i.location !== 'none' ? i.location : (await this.listHosts())[0].name,
      power: stopped(i.status) ? 'stopped' : 'running',
      rescue: i.config[KEY.rescue] === 'true',
      imageId: i.config[KEY.image] ?? '',
      hostname: i.config[KEY.hostname] ?? '',
    }
  }

  async destroyInstance(ref: string): Promise<void> {
    const i = await this.mustFind(ref)
    if (!stopped(i.status)) await this.waitOk(await this.state(ref, { action: 'stop', force: true }))
    await this.waitOk(await this.lxd.call('DELETE', `/1.0/instances/${ref}`))
    const network = i.devices.eth0?.network
    if (network) await this.serialized(() => attachAcl(this.lxd, network, ref, false)).catch(() => undefined)
    await this.lxd.call('DELETE', `/1.0/network-acls/${ref}`).catch(() => undefined)
  }

  async start(ref: string): Promise<Operation> {
    const i = await this.mustFind(ref)
    if (!stopped(i.status)) throw new HypervisorError('The instance is already running')
    return opRef('start', ref, await this.state(ref, { action: 'start' }))
  }

  async shutdown(ref: string, opts: { timeoutSeconds: number }): Promise<Operation> {
    await this.mustRun(ref)
    const id = await this.state(ref, { action: 'stop', force: false, timeout: opts.timeoutSeconds })
    return opRef('stop', ref, id, String(opts.timeoutSeconds))
  }

  async powerOff(ref: string): Promise<Operation> {
    await this.mustRun(ref)
    return opRef('poweroff', ref, await this.state(ref, { action: 'stop', force: true }))
  }

  async reboot(ref: string): Promise<Operation> {
    await this.mustRun(ref)
    return opRef('reboot', ref, await this.state(ref, { action: 'restart', force: false, timeout: 60 }))
  }

  /**
   * Marks the instance as in rescue (or not) and restarts it. LXD has no rescue boot for containers: the guest runs
   * its own system; an operator reaches its disk from the host (the storage volume).
   */
  async setRescue(ref: string, enabled: boolean, password: string | null): Promise<Operation> {
    const i = await this.mustFind(ref)
    await this.patchConfig(ref, { [KEY.rescue]: enabled ? 'true' : '' })
    if (enabled && password)
      await this.patchConfig(ref, { [KEY.setup]: JSON.stringify({ hostname: i.config[KEY.hostname] ?? '', password }) })
    const id = stopped(i.status)
      ? await this.state(ref, { action: 'start' })
      : await this.state(ref, { action: 'restart', force: true })
    return opRef('rescue', ref, id)
  }

  /** Rebuilds the instance from `imageId` under the same name, addresses and limits; its snapshots go with it. */
  async reinstall(ref: string, imageId: string, opts: { rootPassword: string; sshKeys: string[] }): Promise<Operation> {
    if (!(await this.listImages()).some((i) => i.slug === imageId))
      throw new HypervisorError(`Unknown image ${imageId}`)
    const i = await this.mustFind(ref)
    if (!stopped(i.status)) await this.waitOk(await this.state(ref, { action: 'stop', force: true }))
    await this.waitOk(await this.lxd.call('DELETE', `/1.0/instances/${ref}`))
    const hostname = i.config[KEY.hostname] ?? ''
    const config = Object.fromEntries(
      Object.entries(i.config).filter(([k]) => k.startsWith('limits.') || k.startsWith('snapshots.') || k === KEY.rdns),
    )
    const id = await this.lxd
      .call(
        'POST',
        `/1.0/instances${i.location && i.location !== 'none' ? `?target=${encodeURIComponent(i.location)}` : ''}`,
        {
          name: ref,
          type: this.s.instanceType,
          source: { type: 'image', alias: imageId },
          config: {
            ...config,
            [KEY.image]: imageId,
            [KEY.hostname]: hostname,
            [KEY.setup]: JSON.stringify({ hostname, password: opts.rootPassword, sshKeys: opts.sshKeys }),
          },
          devices: i.devices,
        },
      )
      .catch((err) => refused(err))
    return opRef('create', ref, id)
  }

  async setRootPassword(ref: string, password: string): Promise<void> {
    const i = await this.mustFind(ref)
    if (i.config[KEY.rescue] === 'true') throw new HypervisorError('The instance is in rescue mode')
    if (stopped(i.status)) throw new HypervisorError('The instance is not running')
    await execIn(this.lxd, ref, setupScript({ hostname: i.config[KEY.hostname] ?? '', password }))
  }

  async setHostname(ref: string, hostname: string): Promise<void> {
    const i = await this.mustFind(ref)
    await this.patchConfig(ref, { [KEY.hostname]: hostname })
    // A stopped guest gets it when it next runs a setup; a running one at once.
    if (!stopped(i.status)) await execIn(this.lxd, ref, setupScript({ hostname }))
  }

  async setReverseDns(ref: string, ip: string, name: string): Promise<void> {
    const i = await this.mustFind(ref)
    const own = [i.devices.eth0?.['ipv4.address'], i.devices.eth0?.['ipv6.address']].filter(Boolean) as string[]
    const routed = (await forwardsOf(this.lxd, i.devices.eth0?.network ?? this.s.network))
      .filter((f) => f.config.target_address === own[0])
      .map((f) => f.listen_address)
    if (![...own, ...routed].includes(ip)) throw new HypervisorError(`${ip} is not an address of this instance`)
    const rdns = JSON.parse(i.config[KEY.rdns] || '{}') as Record<string, string>
    if (name) rdns[ip] = name
    else delete rdns[ip]
    await this.patchConfig(ref, { [KEY.rdns]: JSON.stringify(rdns) })
  }

  async createBackup(ref: string): Promise<Operation> {
    await this.mustFind(ref)
    const name = `manual-${Math.floor(Date.now() / 1000)}`
    return opRef(
      'backup',
      ref,
      await this.lxd.call('POST', `/1.0/instances/${ref}/snapshots`, { name, stateful: false }),
    )
  }

  async restoreBackup(ref: string, key: number): Promise<Operation> {
    await this.mustFind(ref)
    const snap = snapshotName(key)
    if (!(await this.listBackups(ref)).some((b) => b.key === key)) throw new HypervisorError(`No backup ${key}`)
    return opRef('restore', ref, await this.lxd.call('PUT', `/1.0/instances/${ref}`, { restore: snap }))
  }

  async listBackups(ref: string): Promise<Backup[]> {
    await this.mustFind(ref)
    return backupsOf(await this.lxd.get(`/1.0/instances/${ref}/snapshots?recursion=1`))
  }

  backupsVersion(): string | null {
    return null
  }

  /**
   * Keeps the instance's inbound rules as the network ACL named after it, its rules aimed at the instance's
   * addresses, on the list of its account's network (whose default for the rest is reject).
   */
  async setFirewall(ref: string, firewall: FirewallConfig): Promise<void> {
    const eth0 = (await this.mustFind(ref)).devices.eth0 ?? {}
    await putFirewall(this.lxd, ref, firewall, [eth0['ipv4.address'], eth0['ipv6.address']])
    if (eth0.network) await this.serialized(() => attachAcl(this.lxd, eth0.network, ref, true))
  }

  /**
   * Connects the instance to the private network's bridge, created on first use without an address on the host:
   * customers' private ranges overlap, so the host takes part in none of them and two networks never meet. The
   * guest gets its address from the driver (exec), again whenever the driver starts it.
   */
  async attachNetwork(ref: string, network: PrivateNetwork): Promise<void> {
    const i = await this.mustFind(ref)
    const net = `${this.s.privateNetworkPrefix}${network.networkId}`
    await this.lxd
      .call('POST', '/1.0/networks', {
        name: net,
        type: 'bridge',
        description: 'hostapi private network',
        config: { 'ipv4.address': 'none', 'ipv6.address': 'none' },
      })
      .catch((err) => {
        if (!/already exists/i.test(String((err as Error).message))) return refused(err)
      })
    const device = `vpc${network.networkId}`
    const address = `${network.address}/${network.cidr.split('/')[1]}`
    await this.waitOk(
      await this.lxd.call('PATCH', `/1.0/instances/${ref}`, {
        devices: { ...i.devices, [device]: { type: 'nic', network: net, name: device } },
        config: { [`${KEY.vpc}${device}`]: address },
      }),
    )
    if (!stopped(i.status))
      await execIn(
        this.lxd,
        ref,
        setupScript({ hostname: i.config[KEY.hostname] ?? '', networks: [{ device, address }] }),
      )
  }

  reserveFloatingIp(location: string): Promise<string> {
    return reserveFloating(this.lxd, this.s, location)
  }

  async routeFloatingIp(ip: string, ref: string | null): Promise<void> {
    const eth0 = ref ? ((await this.mustFind(ref)).devices.eth0 ?? {}) : null
    const target = eth0 ? { address: eth0['ipv4.address'] ?? '', network: eth0.network ?? this.s.network } : null
    await routeFloating(this.lxd, this.s, ip, target)
  }

  releaseFloatingIp(ip: string): Promise<void> {
    return releaseFloating(this.lxd, this.s, ip)
  }

  async wait(operation: Operation, onProgress?: (percent: number) => Promise<void> | void): Promise<OperationResult> {
    const [kind, name, id, extra] = operation.ref.split('|') as [Kind, string, string, string]
    await onProgress?.(0)
    try {
      const failed = id ? await this.follow(id) : null
      if (failed) {
        if (kind === 'stop' && !stopped((await this.find(name))?.status ?? 'Stopped'))
          return { ok: false, error: `The guest did not shut down within ${extra} seconds; use power off` }
        return { ok: false, error: failed }
      }
      // What the action leads to, checked on the instance (a finished LXD operation is forgotten after a while).
      const i = await this.find(name)
      if (!i)
        return kind === 'backup'
          ? { ok: false, error: 'The instance is gone' }
          : { ok: false, error: 'The instance does not exist' }
      if (kind === 'stop' || kind === 'poweroff') {
        if (!stopped(i.status)) return { ok: false, error: 'The instance is still running' }
      } else if (kind !== 'backup') {
        if (stopped(i.status)) await this.waitOk(await this.state(name, { action: 'start' }))
        const setup = JSON.parse(i.config[KEY.setup] || 'null') as GuestSetup | null
        const networks = vpcsOf(i.config)
        if (setup || networks.length)
          await execIn(this.lxd, name, setupScript({ hostname: i.config[KEY.hostname] ?? '', ...setup, networks }))
        if (setup) await this.patchConfig(name, { [KEY.setup]: '' })
      }
      await onProgress?.(100)
      return { ok: true }
    } catch (err) {
      if (err instanceof HypervisorError) return { ok: false, error: err.message }
      if (err instanceof LxdError && err.status >= 400 && err.status < 500) return { ok: false, error: err.message }
      throw err
    }
  }

  // --- helpers

  /** Waits for an LXD operation; its error text when it failed, null when it succeeded or is no longer known. */
  private async follow(id: string): Promise<string | null> {
    for (;;) {
      let op: Awaited<ReturnType<LxdClient['wait']>>
      try {
        op = await this.lxd.wait(id, 30)
      } catch (err) {
        if (notFound(err)) return null
        throw err
      }
      if (op.status === 'Success') return null
      if (op.status === 'Failure' || op.status === 'Cancelled') return op.err || op.status
    }
  }

  private async waitOk(id: string | null): Promise<void> {
    if (!id) return
    const failed = await this.follow(id)
    if (failed) throw new HypervisorError(failed)
  }

  private state(ref: string, body: Record<string, unknown>): Promise<string | null> {
    return this.lxd.call('PUT', `/1.0/instances/${ref}/state`, body).catch((err) => refused(err))
  }

  private async patchConfig(ref: string, config: Record<string, string>): Promise<void> {
    await this.waitOk(await this.lxd.call('PATCH', `/1.0/instances/${ref}`, { config }))
  }

  private async find(ref: string): Promise<LxdInstance | null> {
    if (!/^hv-[0-9a-f]{12}$/.test(ref)) return null
    try {
      return await this.lxd.get<LxdInstance>(`/1.0/instances/${ref}`)
    } catch (err) {
      if (notFound(err)) return null
      throw err
    }
  }

  private async mustFind(ref: string): Promise<LxdInstance> {
    const i = await this.find(ref)
    if (!i) throw new HypervisorError('The instance does not exist')
    return i
  }

  private async mustRun(ref: string): Promise<void> {
    if (stopped((await this.mustFind(ref)).status)) throw new HypervisorError('The instance is not running')
  }

  /** The next free addresses on an instances' network. */
  private async allocate(network: string): Promise<{ ipv4: string; ipv6: string }> {
    const net = await this.lxd.get<{ config: Record<string, string> }>(`/1.0/networks/${network}`)
    const instances = await this.lxd.get<LxdInstance[]>('/1.0/instances?recursion=1')
    const used = new Set<string>()
    for (const i of instances)
      for (const d of Object.values(i.devices ?? {})) if (d['ipv4.address']) used.add(d['ipv4.address'])
    const ipv4 = freeIpv4(net.config['ipv4.address'] ?? '', used)
    if (!ipv4) throw new HypervisorError(`No address is free on ${network}`)
    return { ipv4, ipv6: ipv6For(net.config['ipv6.address'], ipv4) }
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.allocating.then(fn, fn)
    this.allocating = next.catch(() => undefined)
    return next
  }
}
