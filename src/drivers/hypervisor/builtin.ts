import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import { isUniqueViolation } from '../../db/errors.js'
import { present } from '../../lib/invariant.js'
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
import type { HvInstance } from './builtin.tables.js'
import * as repo from './builtin.repository.js'
import type { HvDb, InstanceChanges } from './builtin.repository.js'
import { jsonColumns, type Decoded } from '../../db/json-columns.js'
import { insertManualBackup, lastNightly, listWithNightlies } from './builtin-backups.js'
import { FLOATING_BASE, INSTANCE_BASE, SIM_DURATIONS_MS, SIM_HOSTS, SIM_IMAGES, addressAt } from './builtin-sim.js'
import { simPasswordHash as hash } from './builtin-sim.js'

const PROGRESS_STEPS = 4

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The JSON columns of a simulated instance, decoded. */
interface InstanceJson {
  ssh_keys: string[]
  reverse_dns: Record<string, string>
  firewall: FirewallConfig
  networks: PrivateNetwork[]
}
/** A simulated instance with its JSON columns decoded. */
export type Instance = Decoded<HvInstance, InstanceJson>
const decodeInstance = jsonColumns<InstanceJson>('ssh_keys', 'reverse_dns', 'firewall', 'networks')
const decodeOperation = jsonColumns<{ params: Record<string, unknown> }>('params')

/**
 * The built-in hypervisor: instances, operations and backups live in the database, so every instance of
 * hostapi sees the same simulated machines. Actions take their realistic time divided by `speed`.
 */
export class BuiltinHypervisor implements HypervisorDriver {
  readonly name = 'builtin'

  constructor(
    private readonly db: HvDb,
    private readonly clock: Clock,
    private readonly opts: { speed: number },
  ) {}

  async listHosts(): Promise<HypervisorHost[]> {
    return SIM_HOSTS.map((h) => ({ ...h }))
  }

  async listImages(): Promise<OsImage[]> {
    return SIM_IMAGES.map((i) => ({ ...i }))
  }

  async createInstance(spec: InstanceSpec) {
    if (!SIM_IMAGES.some((i) => i.slug === spec.imageId)) throw new HypervisorError(`Unknown image ${spec.imageId}`)
    const host = spec.host ? SIM_HOSTS.find((h) => h.name === spec.host) : await this.leastLoadedHost(spec.location)
    if (!host || host.location !== spec.location) throw new HypervisorError(`No host available in ${spec.location}`)
    const now = iso(this.clock.now())
    const created = await this.db.transaction().execute(async (trx) => {
      const id = await repo.insertInstance(trx, {
        host: host.name,
        location: host.location,
        power: 'stopped',
        rescue: 0,
        image_id: spec.imageId,
        hostname: spec.hostname,
        root_password_hash: hash(spec.rootPassword),
        ssh_keys: JSON.stringify(spec.sshKeys),
        ipv4: '',
        ipv6: '',
        reverse_dns: '{}',
        firewall: JSON.stringify({ enabled: false, rules: [] }),
        networks: '[]',
        ignores_shutdown: 0,
        destroyed: 0,
        created_at: now,
        updated_at: now,
      })
      const ipv4 = addressAt(INSTANCE_BASE, id)
      const ipv6 = `2001:db8:${SIM_HOSTS.indexOf(host) + 1}::${id.toString(16)}`
      await repo.updateInstance(trx, id, { ipv4, ipv6 }, now)
      return { id, ipv4, ipv6 }
    })
    const operation = await this.begin(created.id, 'create', {}, SIM_DURATIONS_MS.create)
    return { ref: String(created.id), host: host.name, ipv4: created.ipv4, ipv6: created.ipv6, operation }
  }

  async getInstance(ref: string): Promise<InstanceState | null> {
    const row = await this.find(ref)
    if (!row) return null
    return {
      ref,
      host: row.host,
      power: row.power,
      rescue: row.rescue === 1,
      imageId: row.image_id,
      hostname: row.hostname,
    }
  }

  async destroyInstance(ref: string): Promise<void> {
    const row = await this.mustFind(ref)
    await this.db.transaction().execute((trx) => repo.destroyInstance(trx, row.id, iso(this.clock.now())))
  }

  async start(ref: string) {
    const row = await this.mustFind(ref)
    if (row.power !== 'stopped') throw new HypervisorError('The instance is not stopped')
    return this.begin(row.id, 'start', {}, SIM_DURATIONS_MS.start)
  }

  async shutdown(ref: string, opts: { timeoutSeconds: number }) {
    const row = await this.mustFind(ref)
    if (row.power !== 'running') throw new HypervisorError('The instance is not running')
    // A guest that ignores ACPI keeps the operation waiting for the whole timeout, then it fails.
    if (row.ignores_shutdown === 1) {
      return this.begin(
        row.id,
        'shutdown',
        {},
        (opts.timeoutSeconds * 1000) / this.opts.speed,
        `The guest did not shut down within ${opts.timeoutSeconds} seconds; use power off`,
        false,
      )
    }
    return this.begin(row.id, 'shutdown', {}, Math.min(SIM_DURATIONS_MS.shutdown, opts.timeoutSeconds * 1000))
  }

  async powerOff(ref: string) {
    const row = await this.mustFind(ref)
    if (row.power !== 'running') throw new HypervisorError('The instance is not running')
    return this.begin(row.id, 'poweroff', {}, SIM_DURATIONS_MS.poweroff)
  }

  async reboot(ref: string) {
    const row = await this.mustFind(ref)
    if (row.power !== 'running') throw new HypervisorError('The instance is not running')
    return this.begin(row.id, 'reboot', {}, SIM_DURATIONS_MS.reboot)
  }

  async setRescue(ref: string, enabled: boolean, password: string | null) {
    const row = await this.mustFind(ref)
    if (enabled && !password) throw new HypervisorError('Rescue mode needs a password')
    return this.begin(
      row.id,
      'rescue',
      { enabled, passwordHash: password ? hash(password) : null },
      SIM_DURATIONS_MS.rescue,
    )
  }

  async reinstall(ref: string, imageId: string, opts: { rootPassword: string; sshKeys: string[] }) {
    const row = await this.mustFind(ref)
    if (!SIM_IMAGES.some((i) => i.slug === imageId)) throw new HypervisorError(`Unknown image ${imageId}`)
    return this.begin(
      row.id,
      'reinstall',
      { imageId, passwordHash: hash(opts.rootPassword), sshKeys: opts.sshKeys },
      SIM_DURATIONS_MS.reinstall,
    )
  }

  async setRootPassword(ref: string, password: string): Promise<void> {
    const row = await this.mustFind(ref)
    if (row.power !== 'running' || row.rescue === 1) throw new HypervisorError('The guest agent is not reachable')
    await this.update(row.id, { root_password_hash: hash(password) })
  }

  async setHostname(ref: string, hostname: string): Promise<void> {
    const row = await this.mustFind(ref)
    await this.update(row.id, { hostname })
  }

  async setReverseDns(ref: string, ip: string, name: string): Promise<void> {
    const row = await this.mustFind(ref)
    const owned = ip === row.ipv4 || ip === row.ipv6 || (await repo.floatingIpRoutedTo(this.db, ip, row.id))
    if (!owned) throw new HypervisorError(`${ip} is not routed to this instance`)
    const map = { ...row.reverse_dns }
    if (name) map[ip] = name
    else delete map[ip]
    await this.update(row.id, { reverse_dns: JSON.stringify(map) })
  }

  async createBackup(ref: string) {
    const row = await this.mustFind(ref)
    return this.begin(row.id, 'backup', {}, SIM_DURATIONS_MS.backup)
  }

  async restoreBackup(ref: string, key: number) {
    const row = await this.mustFind(ref)
    if (!(await repo.findBackup(this.db, row.id, key))) throw new HypervisorError('Unknown backup')
    return this.begin(row.id, 'restore', { key }, SIM_DURATIONS_MS.restore)
  }

  async listBackups(ref: string): Promise<Backup[]> {
    const id = Number(ref)
    const list = Number.isSafeInteger(id) ? await listWithNightlies(this.db, this.clock.now(), id) : undefined
    if (!list) throw new HypervisorError(`Unknown instance ${ref}`)
    return list
  }

  /** Backups live in the database; besides its writes only the clock adds one, at the nightly hour. */
  backupsVersion(): string {
    return String(lastNightly(this.clock.now()))
  }

  async setFirewall(ref: string, firewall: FirewallConfig): Promise<void> {
    const row = await this.mustFind(ref)
    await this.update(row.id, { firewall: JSON.stringify(firewall) })
  }

  async attachNetwork(ref: string, network: PrivateNetwork): Promise<void> {
    const row = await this.mustFind(ref)
    const list = row.networks.filter((n) => n.networkId !== network.networkId)
    list.push(network)
    await this.update(row.id, { networks: JSON.stringify(list) })
  }

  async reserveFloatingIp(location: string): Promise<string> {
    if (!SIM_HOSTS.some((h) => h.location === location)) throw new HypervisorError(`Unknown location ${location}`)
    for (let attempt = 0; ; attempt++) {
      const ip = addressAt(FLOATING_BASE, (await repo.countFloatingIps(this.db)) + 1 + attempt)
      try {
        await repo.insertFloatingIp(this.db, { ip, location, now: iso(this.clock.now()) })
        return ip
      } catch (err) {
        if (!isUniqueViolation(err) || attempt > 50) throw err
      }
    }
  }

  async routeFloatingIp(ip: string, ref: string | null): Promise<void> {
    const target = ref === null ? null : (await this.mustFind(ref)).id
    if (!(await repo.routeFloatingIp(this.db, ip, target))) throw new HypervisorError(`Unknown floating address ${ip}`)
  }

  async releaseFloatingIp(ip: string): Promise<void> {
    await repo.deleteFloatingIp(this.db, ip)
  }

  async wait(operation: Operation, onProgress?: (percent: number) => Promise<void> | void): Promise<OperationResult> {
    const id = Number(operation.ref)
    for (;;) {
      const op = await repo.findOperation(this.db, id)
      if (!op) return { ok: false, error: 'Unknown operation' }
      if (op.status === 'done') return { ok: true }
      if (op.status === 'failed') return { ok: false, error: op.error ?? 'Failed' }
      const elapsed = this.clock.now().getTime() - new Date(op.started_at).getTime()
      const remaining = op.duration_ms - elapsed
      if (remaining > 0) {
        await onProgress?.(Math.min(99, Math.floor((elapsed / Math.max(1, op.duration_ms)) * 100)))
        await sleep(Math.min(remaining, Math.max(5, op.duration_ms / PROGRESS_STEPS)))
        continue
      }
      await this.finish(id)
    }
  }

  /** Test and operator controls of the simulation: a guest that ignores ACPI, or a failure of the next operation. */
  async simulate(ref: string, behaviour: { ignoresShutdown?: boolean; failNext?: string | null }): Promise<void> {
    const row = await this.mustFind(ref)
    await this.update(row.id, {
      ...(behaviour.ignoresShutdown !== undefined ? { ignores_shutdown: behaviour.ignoresShutdown ? 1 : 0 } : {}),
      ...(behaviour.failNext !== undefined ? { fail_next: behaviour.failNext } : {}),
    })
  }

  /** The simulated instance, its JSON columns decoded (tests and the admin side read it). */
  async inspect(ref: string): Promise<Instance | undefined> {
    return this.find(ref)
  }

  private async leastLoadedHost(location: string): Promise<HypervisorHost | undefined> {
    const candidates = SIM_HOSTS.filter((h) => h.location === location)
    if (candidates.length === 0) return undefined
    const counts = await repo.hostLoads(this.db)
    const load = (h: HypervisorHost) => Number(counts.find((c) => c.host === h.name)?.n ?? 0)
    return [...candidates].sort((a, b) => load(a) - load(b))[0]
  }

  private async find(ref: string): Promise<Instance | undefined> {
    const id = Number(ref)
    if (!Number.isSafeInteger(id)) return undefined
    const row = await repo.findLiveInstance(this.db, id)
    return row && decodeInstance(row)
  }

  private async mustFind(ref: string): Promise<Instance> {
    const row = await this.find(ref)
    if (!row) throw new HypervisorError(`Unknown instance ${ref}`)
    return row
  }

  private async update(id: number, changes: InstanceChanges) {
    await repo.updateInstance(this.db, id, changes, iso(this.clock.now()))
  }

  /** Starts an operation; one that a fault was injected for fails at its end. */
  private async begin(
    instanceId: number,
    action: string,
    params: unknown,
    durationMs: number,
    failsWith: string | null = null,
    scale = true,
  ): Promise<Operation> {
    const injected = await repo.failNextOf(this.db, instanceId)
    if (injected !== null) await this.update(instanceId, { fail_next: null })
    const id = await repo.insertOperation(this.db, {
      instance_id: instanceId,
      action,
      params: JSON.stringify(params ?? {}),
      status: 'running',
      started_at: iso(this.clock.now()),
      duration_ms: Math.max(0, Math.round(scale ? durationMs / this.opts.speed : durationMs)),
      fails_with: injected ?? failsWith,
    })
    return { ref: String(id) }
  }

  /** Ends an operation and applies its effect, exactly once even when several waiters race. */
  private async finish(id: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const now = iso(this.clock.now())
      const op = present(await repo.findOperation(trx, id), `operation ${id}`)
      const status = op.fails_with ? 'failed' : 'done'
      const claimed = await repo.endOperation(trx, id, { status, error: op.fails_with, now })
      if (!claimed || op.fails_with) return
      const { params } = decodeOperation(op)
      const set = (changes: InstanceChanges) => repo.updateInstance(trx, op.instance_id, changes, now)
      switch (op.action) {
        case 'create':
        case 'start':
        case 'reboot':
          await set({ power: 'running' })
          break
        case 'shutdown':
        case 'poweroff':
          await set({ power: 'stopped', rescue: 0, rescue_password_hash: null })
          break
        case 'rescue':
          await set(
            params.enabled
              ? { power: 'running', rescue: 1, rescue_password_hash: params.passwordHash as string }
              : { power: 'running', rescue: 0, rescue_password_hash: null },
          )
          break
        case 'reinstall':
          await set({
            power: 'running',
            rescue: 0,
            image_id: params.imageId as string,
            root_password_hash: params.passwordHash as string,
            ssh_keys: JSON.stringify(params.sshKeys ?? []),
          })
          break
        case 'backup':
          await insertManualBackup(trx, op.instance_id, id, now, this.clock.now())
          break
        case 'restore': {
          const imageId = await repo.backupImage(trx, Number(params.key))
          await set({ power: 'running', rescue: 0, ...(imageId !== undefined ? { image_id: imageId } : {}) })
          break
        }
      }
    })
  }
}
