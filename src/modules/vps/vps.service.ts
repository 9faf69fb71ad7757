import type { Kysely } from 'kysely'
import ipaddr from 'ipaddr.js'
import type { Clock } from '../../clock.js'
import { iso, ymdhm } from '../../clock.js'
import { jsonObjectOf, type JsonText } from '../../lib/json-text.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import type { JobRunner } from '../../jobs/runner.js'
import type { HypervisorDriver } from '../../drivers/hypervisor/hypervisor.js'
import * as repo from './vps.repository.js'
import type { Vps } from './vps.repository.js'
import { isHostname } from './network-rules.js'
import { ownedVps, viaDriver } from './vps.common.js'
import type { DryRun } from '../../lib/dry-run.js'
import { TERMINATED_REFUSAL } from './vps.state.js'
import { present } from '../../lib/invariant.js'
import { SshKeysService } from './ssh-keys.service.js'
import { VpsNetworkService } from './vps-network.service.js'
import { VpsTasks, taskView, type VpsTaskOptions } from './vps-tasks.service.js'
import { VpsBackupsService } from './vps-backups.service.js'
import { VpsLifecycleService } from './vps-lifecycle.service.js'
import { VpsOrderingService } from './vps-ordering.service.js'

const normaliseIp = (ip: string): string | null => {
  try {
    return ipaddr.parse(ip).toString()
  } catch {
    return null
  }
}

/** The fields a VPS shows first, in the list and in its details alike. */
const identity = (v: Vps) => ({
  id: v.id,
  name: v.name,
  hostname: v.hostname,
  status: v.status,
  product: v.product_id,
  location: v.location,
})

/** What VpsService is built on. */
export interface VpsServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  hypervisor: HypervisorDriver
  opts: VpsTaskOptions
}

/**
 * The VPS area: the instances (list, details, reverse DNS, images) here, and one service per other concern:
 * tasks (power), backups, lifecycle (rescue, reinstall, password, hostname, cancellation), ordering, SSH keys
 * and network.
 */
export class VpsService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly hypervisor: HypervisorDriver

  constructor(deps: VpsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.hypervisor = deps.hypervisor
    const { db, clock, jobs, hypervisor } = deps
    this.sshKeys = new SshKeysService({ db, clock })
    this.network = new VpsNetworkService({ db, clock, hypervisor })
    this.tasks = new VpsTasks({ db, clock, jobs, hypervisor, opts: deps.opts })
    const tasks = this.tasks
    const sshKeys = this.sshKeys
    this.backups = new VpsBackupsService({ db, hypervisor, tasks })
    this.lifecycle = new VpsLifecycleService({ db, clock, jobs, hypervisor, tasks, sshKeys })
    this.ordering = new VpsOrderingService({ db, clock, hypervisor, tasks, sshKeys })
  }

  /** SSH keys of the account. */
  readonly sshKeys: SshKeysService
  /** Firewall, VPC, subnets and floating IPs. */
  readonly network: VpsNetworkService
  /** Tasks: queueing, running and ending them; the power actions. */
  readonly tasks: VpsTasks
  /** Backups and their restore. */
  readonly backups: VpsBackupsService
  /** Rescue mode, reinstall, root password, hostname, cancellation and expiry. */
  readonly lifecycle: VpsLifecycleService
  /** Products, order checks and provisioning. */
  readonly ordering: VpsOrderingService

  /** The account's VPS, in short. */
  async list(accountId: number): Promise<JsonText> {
    return jsonObjectOf([['vps', await repo.listVpsJson(this.db, accountId)]])
  }

  /** One VPS in full: specs, addresses with reverse names, private networks and open tasks. */
  async details(accountId: number, rawId: string) {
    const v = await ownedVps(this.db, accountId, rawId)
    return this.describe(v)
  }

  /** The OS images the hypervisor offers. */
  async images() {
    return this.hypervisor.listImages()
  }

  private async describe(v: Vps) {
    const [tasks, floating, networks, images] = await Promise.all([
      repo.openTasks(this.db, v.account_id, [v.id]),
      repo.floatingIpsOfVps(this.db, v.account_id, v.id),
      repo.attachmentsOfVps(this.db, v.account_id, v.id),
      // The image's id and name come from the hypervisor; while it is unreachable the VPS is shown without them.
      this.hypervisor.listImages().catch(() => []),
    ])
    const reverse = v.reverse_dns
    const image = images.find((i) => i.slug === v.image_id)
    return {
      ...identity(v),
      host: v.host,
      specs: { cpu: v.cpu, memory_mb: v.memory_mb, disk_gb: v.disk_gb },
      image: { id: image?.id ?? null, slug: v.image_id, name: image?.name ?? v.image_id },
      ips: [
        { ip: v.ipv4, version: 4, type: 'primary', reverse: reverse[v.ipv4] ?? v.hostname },
        { ip: v.ipv6, version: 6, type: 'primary', reverse: reverse[v.ipv6] ?? v.hostname },
        ...floating.map((f) => ({ ip: f.ip, version: 4, type: 'floating', reverse: reverse[f.ip] ?? v.hostname })),
      ],
      private_networks: networks.map((n) => ({
        subnet_id: n.subnet_id,
        name: n.name,
        cidr: n.cidr,
        address: n.address,
      })),
      rescue: v.rescue === 1,
      tasks: tasks.map(taskView),
      vps_locked: v.task_id !== null,
      cancellation_date: v.cancellation_date,
      created: ymdhm(new Date(v.created_at)),
    }
  }

  /** Sets reverse DNS names of the VPS's addresses (an empty name restores the default). */
  async updateReverseDns(
    accountId: number,
    rawId: string,
    entries: Array<{ ip: string; reverse: string }>,
    opts: DryRun = {},
  ) {
    const v = await ownedVps(this.db, accountId, rawId)
    if (v.status === 'terminated') throw errors.vpsWrongState(TERMINATED_REFUSAL)
    const floating = await repo.floatingIpsOfVps(this.db, v.account_id, v.id)
    const own = new Set<string>()
    for (const ip of [v.ipv4, v.ipv6, ...floating.map((f) => f.ip)]) {
      const normal = normaliseIp(ip)
      if (normal !== null) own.add(normal)
    }
    const changes: Array<{ ip: string; reverse: string }> = []
    for (const e of entries) {
      const ip = normaliseIp(e.ip)
      if (!ip || !own.has(ip)) throw errors.vpsIpNotOwned(e.ip)
      const name = e.reverse.trim().replace(/\.$/, '').toLowerCase()
      if (name !== '' && (!isHostname(name) || !name.includes('.'))) throw errors.vpsInvalidReverse(e.ip)
      changes.push({ ip, reverse: name })
    }
    const map = { ...v.reverse_dns }
    for (const c of changes) {
      if (!opts.dryRun) await viaDriver(() => this.hypervisor.setReverseDns(v.instance_ref, c.ip, c.reverse))
      if (c.reverse) map[c.ip] = c.reverse
      else delete map[c.ip]
    }
    if (opts.dryRun) return this.describe({ ...v, reverse_dns: map })
    const changed = { reverse_dns: JSON.stringify(map), updated_at: iso(this.clock.now()) }
    await repo.updateVps(this.db, accountId, v.id, changed)
    return this.describe(present(await repo.findVps(this.db, accountId, v.id), `VPS ${v.id} just updated`))
  }
}
