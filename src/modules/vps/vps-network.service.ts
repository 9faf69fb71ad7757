import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso, ymdhm } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { isUniqueViolation } from '../../db/errors.js'
import { errors } from '../../errors.js'
import type { FirewallConfig, HypervisorDriver } from '../../drivers/hypervisor/hypervisor.js'
import * as repo from './vps.repository.js'
import { dmyhm, isId, ownedVps, viaDriver } from './vps.common.js'
import {
  firstFreeAddress,
  normaliseFirewall,
  planSubnet,
  type FirewallRuleInput,
  type SubnetInput,
} from './network-rules.js'
import { TERMINATED_REFUSAL } from './vps.state.js'
import type { VpsSubnet } from './vps.tables.js'
import type { DryRun } from '../../lib/dry-run.js'

/** What VpsNetworkService is built on. */
export interface VpsNetworkServiceDeps {
  db: Kysely<DB>
  clock: Clock
  hypervisor: HypervisorDriver
}

/** A VPS's network: firewall, the account's VPC on its host with subnets, and floating IPs. */
export class VpsNetworkService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly hypervisor: HypervisorDriver

  constructor(deps: VpsNetworkServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.hypervisor = deps.hypervisor
  }

  // ---- Firewall ---------------------------------------------------------------------------------

  async getFirewall(accountId: number, rawId: string): Promise<FirewallConfig> {
    const v = await ownedVps(this.db, accountId, rawId)
    return v.firewall
  }

  async setFirewall(
    accountId: number,
    rawId: string,
    enabled: boolean,
    rules: FirewallRuleInput[],
    opts: DryRun = {},
  ): Promise<FirewallConfig> {
    const v = await ownedVps(this.db, accountId, rawId)
    const firewall = normaliseFirewall(enabled, rules)
    if (v.status === 'terminated') throw errors.vpsWrongState(TERMINATED_REFUSAL)
    if (opts.dryRun) return firewall
    await viaDriver(() => this.hypervisor.setFirewall(v.instance_ref, firewall))
    await repo.updateVps(this.db, accountId, v.id, {
      firewall: JSON.stringify(firewall),
      updated_at: iso(this.clock.now()),
    })
    return firewall
  }

  // ---- VPC and subnets --------------------------------------------------------------------------

  async getVpc(accountId: number, rawId: string) {
    const v = await ownedVps(this.db, accountId, rawId)
    const vpc = await repo.findVpcOnHost(this.db, accountId, v.host)
    if (!vpc) throw errors.vpcNotFound()
    return this.vpcView(accountId, vpc)
  }

  /** Creates the account's VPC on the VPS's host (one per host per account). */
  async createVpc(accountId: number, rawId: string, name: string, opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    if (!name.trim()) throw errors.vpsMissingName()
    if (await repo.findVpcOnHost(this.db, accountId, v.host)) throw errors.vpcExists()
    if (opts.dryRun) return { id: 0, name: name.trim(), host: v.host, created: ymdhm(this.clock.now()), subnets: [] }
    try {
      const vpc = await repo.insertVpc(this.db, {
        account_id: accountId,
        name: name.trim(),
        host: v.host,
        created_at: iso(this.clock.now()),
      })
      return this.vpcView(accountId, vpc)
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.vpcExists()
      throw err
    }
  }

  /** Adds a subnet to the VPC on the VPS's host, filling the gateway and DHCP range from the CIDR when omitted. */
  async addSubnet(accountId: number, rawId: string, input: SubnetInput & { name?: string }, opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    const vpc = await repo.findVpcOnHost(this.db, accountId, v.host)
    if (!vpc) throw (await repo.countVpcs(this.db, accountId)) > 0 ? errors.vpcOtherHost() : errors.vpcNotFound()
    const existing = await repo.listSubnets(this.db, accountId, vpc.id)
    const plan = planSubnet(input, existing)
    const row = {
      vpc_id: vpc.id,
      account_id: accountId,
      name: input.name?.trim() || plan.cidr,
      cidr: plan.cidr,
      gateway: plan.gateway,
      dhcp_start: plan.dhcpStart,
      dhcp_end: plan.dhcpEnd,
      created_at: iso(this.clock.now()),
    }
    return subnetView(opts.dryRun ? { ...row, id: 0 } : await repo.insertSubnet(this.db, row))
  }

  /** Attaches the VPS to a subnet of its host's VPC and returns its address from the DHCP range. */
  async attachSubnet(accountId: number, rawId: string, rawSubnetId: string, opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    const subnet = isId(rawSubnetId) ? await repo.findSubnet(this.db, accountId, Number(rawSubnetId)) : undefined
    if (!subnet) throw errors.subnetNotFound()
    if (subnet.host !== v.host) throw errors.vpcOtherHost()
    if (v.status === 'terminated') throw errors.vpsWrongState(TERMINATED_REFUSAL)
    for (let attempt = 0; ; attempt++) {
      const taken = await repo.attachmentsOfSubnet(this.db, accountId, subnet.id)
      const mine = taken.find((a) => a.vps_id === v.id)
      if (mine)
        return { vps_id: v.id, subnet_id: subnet.id, address: mine.address, cidr: subnet.cidr, gateway: subnet.gateway }
      const address = firstFreeAddress(
        subnet,
        taken.map((a) => a.address),
      )
      if (!address) throw errors.subnetFull()
      if (opts.dryRun)
        return { vps_id: v.id, subnet_id: subnet.id, address, cidr: subnet.cidr, gateway: subnet.gateway }
      try {
        await repo.insertAttachment(this.db, {
          subnet_id: subnet.id,
          vps_id: v.id,
          address,
          created_at: iso(this.clock.now()),
        })
      } catch (err) {
        if (isUniqueViolation(err) && attempt < 5) continue
        throw err
      }
      await viaDriver(() =>
        this.hypervisor.attachNetwork(v.instance_ref, {
          networkId: subnet.id,
          cidr: subnet.cidr,
          gateway: subnet.gateway,
          address,
        }),
      )
      return { vps_id: v.id, subnet_id: subnet.id, address, cidr: subnet.cidr, gateway: subnet.gateway }
    }
  }

  private async vpcView(accountId: number, vpc: { id: number; name: string; host: string; created_at: string }) {
    const subnets = await repo.listSubnets(this.db, accountId, vpc.id)
    return {
      id: vpc.id,
      name: vpc.name,
      host: vpc.host,
      created: ymdhm(new Date(vpc.created_at)),
      subnets: subnets.map(subnetView),
    }
  }

  // ---- Floating IPs -----------------------------------------------------------------------------

  async listFloatingIps(accountId: number) {
    return (await repo.listFloatingIps(this.db, accountId)).map(floatingView)
  }

  /** Reserves a floating IP in `location`; a dry run answers id 0 and no address (none is taken). */
  async reserveFloatingIp(accountId: number, location: string, opts: DryRun = {}) {
    const locations = [...new Set((await this.hypervisor.listHosts()).map((h) => h.location))]
    if (!locations.includes(location)) throw errors.floatingIpUnknownLocation(locations)
    if (opts.dryRun) return floatingView({ id: 0, ip: '', location, vps_id: null, created_at: iso(this.clock.now()) })
    const ip = await viaDriver(() => this.hypervisor.reserveFloatingIp(location))
    return floatingView(
      await repo.insertFloatingIp(this.db, { account_id: accountId, ip, location, created_at: iso(this.clock.now()) }),
    )
  }

  async attachFloatingIp(accountId: number, rawId: string, vpsId: number, opts: DryRun = {}) {
    const f = await this.floating(accountId, rawId)
    const v = await ownedVps(this.db, accountId, String(vpsId))
    if (f.vps_id !== null && f.vps_id !== v.id) throw errors.floatingIpAttached()
    if (f.location !== v.location) throw errors.floatingIpLocation()
    if (v.status === 'terminated') throw errors.vpsWrongState(TERMINATED_REFUSAL)
    if (opts.dryRun) return floatingView({ ...f, vps_id: v.id })
    await viaDriver(() => this.hypervisor.routeFloatingIp(f.ip, v.instance_ref))
    await repo.setFloatingIpTarget(this.db, accountId, f.id, v.id)
    return floatingView({ ...f, vps_id: v.id })
  }

  async detachFloatingIp(accountId: number, rawId: string, opts: DryRun = {}) {
    const f = await this.floating(accountId, rawId)
    if (f.vps_id === null) throw errors.floatingIpNotAttached()
    if (opts.dryRun) return floatingView({ ...f, vps_id: null })
    await viaDriver(() => this.hypervisor.routeFloatingIp(f.ip, null))
    await repo.setFloatingIpTarget(this.db, accountId, f.id, null)
    return floatingView({ ...f, vps_id: null })
  }

  async deleteFloatingIp(accountId: number, rawId: string, opts: DryRun = {}) {
    const f = await this.floating(accountId, rawId)
    if (f.vps_id !== null) throw errors.floatingIpAttached()
    if (opts.dryRun) return
    await viaDriver(() => this.hypervisor.releaseFloatingIp(f.ip))
    await repo.deleteFloatingIp(this.db, accountId, f.id)
  }

  private async floating(accountId: number, rawId: string) {
    const f = isId(rawId) ? await repo.findFloatingIp(this.db, accountId, Number(rawId)) : undefined
    if (!f) throw errors.floatingIpNotFound()
    return f
  }
}

const subnetView = (s: Omit<VpsSubnet, 'vpc_id' | 'account_id'>) => ({
  id: s.id,
  name: s.name,
  cidr: s.cidr,
  gateway: s.gateway,
  dhcp_start: s.dhcp_start,
  dhcp_end: s.dhcp_end,
  created: dmyhm(new Date(s.created_at)),
})

const floatingView = (f: { id: number; ip: string; location: string; vps_id: number | null; created_at: string }) => ({
  id: f.id,
  ip: f.ip,
  location: f.location,
  vps_id: f.vps_id,
  created: ymdhm(new Date(f.created_at)),
})
