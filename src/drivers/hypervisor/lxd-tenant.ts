import { createHash, randomBytes } from 'node:crypto'
import type { LxdClient } from './lxd-client.js'
import { HypervisorError } from './hypervisor.js'
import { refused } from './lxd-network.js'

/** The settings of the accounts' own networks. */
export interface TenantSettings {
  /** The range (`10.144.0.0/12`) the accounts' subnets are cut from. */
  tenantSubnets: string
  /** The prefix length of one account's subnet (24). */
  tenantPrefix: number
}

/** The key of a network's configuration naming the account it belongs to (a digest: no customer data on LXD). */
export const TENANT_KEY = 'user.hostapi.tenant'
/** The ACL every account network carries: it drops what comes from other accounts' networks. */
export const guardAcl = (network: string) => `${network}-guard`

const toInt = (ip: string) => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0)
const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.')
const parse = (cidr: string) => {
  const [ip, bits] = cidr.split('/')
  const b = Number(bits)
  const size = 2 ** (32 - b)
  return { base: toInt(ip) - (toInt(ip) % size), bits: b, size }
}

/** The first subnet of `prefix` bits inside `pool` that overlaps none of `used` (CIDRs), as `gateway/prefix`. */
export function freeSubnet(pool: string, prefix: number, used: string[]): string | null {
  const p = parse(pool)
  const taken = used.filter((c) => /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(c)).map(parse)
  const size = 2 ** (32 - prefix)
  for (let n = p.base; n + size <= p.base + p.size; n += size)
    if (!taken.some((t) => n < t.base + t.size && t.base < n + size)) return `${toIp(n + 1)}/${prefix}`
  return null
}

/** The CIDRs that cover `pool` except `own` (a subnet inside it): the other accounts' side of the pool. */
export function poolExcept(pool: string, own: string): string[] {
  const p = parse(pool)
  const o = parse(own)
  const out: string[] = []
  // Walk down from the pool to the own subnet: at each level the half that does not hold it is someone else's.
  for (let bits = p.bits + 1; bits <= o.bits; bits++) {
    const size = 2 ** (32 - bits)
    const mine = o.base - (o.base % size)
    const sibling = mine % (size * 2) === 0 ? mine + size : mine - size
    out.push(`${toIp(sibling)}/${bits}`)
  }
  return out
}

/** The ULA /48 the accounts' IPv6 /64s come from, fixed by the IPv4 pool (the n-th subnet gets the n-th /64). */
export function ipv6Base(pool: string): string {
  const h = createHash('sha256').update(`hostapi-ula:${pool}`).digest('hex')
  return `fd${h.slice(0, 2)}:${h.slice(2, 6)}:${h.slice(6, 10)}`
}

/** The IPv6 /64 of the account subnet `subnet` (gateway/prefix) and the /48's CIDRs that are other accounts'. */
export function ipv6Of(pool: string, subnet: string): { gateway: string; others: string[] } {
  const base = ipv6Base(pool)
  const n = (parse(subnet).base - parse(pool).base) / parse(subnet).size
  const others: string[] = []
  for (let bits = 49; bits <= 64; bits++) {
    const sibling = (n & ~(2 ** (64 - bits) - 1) & 0xffff) ^ (2 ** (64 - bits))
    others.push(`${base}:${sibling.toString(16)}::/${bits}`)
  }
  return { gateway: `${base}:${n.toString(16)}::1/64`, others }
}

interface LxdNetwork {
  name: string
  managed: boolean
  config: Record<string, string>
}

/** The digest of an account key that a network carries. */
export const tenantDigest = (tenant: string) => createHash('sha256').update(`hostapi-tenant:${tenant}`).digest('hex')

/**
 * The account's own bridge: found by its digest, or created with the next free subnet of the pool, a random name,
 * a random IPv6 /64, and the guard ACL (traffic from other accounts' subnets dropped, anything not allowed by a
 * VPS's firewall rejected). Callers serialize it with other address allocations.
 */
export async function tenantNetwork(lxd: LxdClient, s: TenantSettings, tenant: string): Promise<LxdNetwork> {
  const digest = tenantDigest(tenant)
  const networks = await lxd.get<LxdNetwork[]>('/1.0/networks?recursion=1')
  const own = networks.find((n) => n.config?.[TENANT_KEY] === digest)
  if (own) return own
  const subnet = freeSubnet(
    s.tenantSubnets,
    s.tenantPrefix,
    networks.map((n) => n.config?.['ipv4.address'] ?? ''),
  )
  if (!subnet) throw new HypervisorError('No subnet is free for a new account network')
  const name = `hta${randomBytes(5).toString('hex')}`
  const cidr = `${toIp(parse(subnet).base)}/${s.tenantPrefix}`
  const v6 = ipv6Of(s.tenantSubnets, subnet)
  const others = [...poolExcept(s.tenantSubnets, cidr), ...v6.others].join(',')
  await lxd
    .call('POST', '/1.0/network-acls', {
      name: guardAcl(name),
      description: 'hostapi: other accounts',
      ingress: [{ action: 'drop', state: 'enabled', source: others, description: 'from other accounts' }],
      // Outbound too: with NAT on, a packet to another account's subnet would leave with that bridge's address.
      egress: [{ action: 'drop', state: 'enabled', destination: others, description: 'to other accounts' }],
      config: {},
    })
    .catch((err) => refused(err))
  const config = {
    [TENANT_KEY]: digest,
    'ipv4.address': subnet,
    'ipv4.nat': 'true',
    'ipv6.address': v6.gateway,
    'ipv6.nat': 'true',
    'ipv6.dhcp.stateful': 'true',
    'security.acls': guardAcl(name),
    'security.acls.default.ingress.action': 'reject',
    'security.acls.default.egress.action': 'allow',
  }
  await lxd
    .call('POST', '/1.0/networks', { name, type: 'bridge', description: 'hostapi account network', config })
    .catch((err) => refused(err))
  return { name, managed: true, config }
}

/** Adds (or removes) an ACL on a network's list. */
export async function attachAcl(lxd: LxdClient, network: string, acl: string, on: boolean): Promise<void> {
  const net = await lxd.get<LxdNetwork & { description: string }>(`/1.0/networks/${network}`)
  if (!net.config[TENANT_KEY]) return
  const list = (net.config['security.acls'] ?? '').split(',').filter((a) => a && a !== acl)
  if (on) list.push(acl)
  await lxd
    .call('PATCH', `/1.0/networks/${network}`, { config: { 'security.acls': list.join(',') } })
    .catch((err) => refused(err))
}
