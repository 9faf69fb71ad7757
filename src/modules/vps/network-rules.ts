import ipaddr from 'ipaddr.js'
import { errors } from '../../errors.js'
import type { FirewallConfig, FirewallRule } from '../../drivers/hypervisor/hypervisor.js'

/** An IPv4 address as an unsigned 32-bit number. */
export const ipToInt = (ip: string): number =>
  ipaddr.IPv4.parse(ip)
    .toByteArray()
    .reduce((n, b) => n * 256 + b, 0)
/** The dotted form of an unsigned 32-bit number. */
export const intToIp = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')

const PRIVATE_BLOCKS: Array<[string, number]> = [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
]

/** A parsed IPv4 block. */
export interface Block {
  network: number
  prefix: number
  broadcast: number
  cidr: string
}

const strictIpv4 = (s: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(s) && ipaddr.IPv4.isValidFourPartDecimal(s)

/** Parses `a.b.c.d/n` strictly (four decimal parts; the address must be the block's network address). */
export function parseBlock(cidr: string): Block {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(cidr.trim())
  if (!m || !strictIpv4(m[1]) || Number(m[2]) > 32)
    throw errors.subnetInvalid('cidr must be an IPv4 block such as 10.0.0.0/24')
  const prefix = Number(m[2])
  const size = 2 ** (32 - prefix)
  const address = ipToInt(m[1])
  const network = address - (address % size)
  if (network !== address)
    throw errors.subnetInvalid(`cidr must start at the network address (${intToIp(network)}/${prefix})`)
  return { network, prefix, broadcast: network + size - 1, cidr: `${intToIp(network)}/${prefix}` }
}

/** True when the whole block lies in 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (RFC 1918). */
export function isPrivateBlock(b: Block): boolean {
  return PRIVATE_BLOCKS.some(([net, prefix]) => {
    const start = ipToInt(net)
    const end = start + 2 ** (32 - prefix) - 1
    return b.network >= start && b.broadcast <= end
  })
}

export const overlaps = (a: Block, b: Block): boolean => a.network <= b.broadcast && b.network <= a.broadcast

export interface SubnetInput {
  cidr: string
  gateway?: string
  dhcp_start?: string
  dhcp_end?: string
}

export interface SubnetPlan {
  cidr: string
  gateway: string
  dhcpStart: string
  dhcpEnd: string
}

const MIN_PREFIX = 8
const MAX_PREFIX = 30

/**
 * Checks a subnet and fills what is omitted: the gateway is the first usable address, the DHCP range runs
 * from the second usable to the last usable one (around a gateway given elsewhere, the larger side).
 * Private ranges only, no overlap with `existing`, gateway and range inside the block, start ≤ end,
 * the gateway outside the range.
 */
export function planSubnet(input: SubnetInput, existing: Array<{ name: string; cidr: string }>): SubnetPlan {
  const block = parseBlock(input.cidr)
  if (block.prefix < MIN_PREFIX || block.prefix > MAX_PREFIX) {
    throw errors.subnetInvalid(`the prefix length must be from /${MIN_PREFIX} to /${MAX_PREFIX}`)
  }
  if (!isPrivateBlock(block))
    throw errors.subnetInvalid('only private ranges can be used (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)')
  for (const other of existing) {
    if (overlaps(block, parseBlock(other.cidr))) throw errors.subnetOverlap(`${other.name} (${other.cidr})`)
  }
  const first = block.network + 1
  const last = block.broadcast - 1
  const address = (field: string, value: string | undefined): number | undefined => {
    if (value === undefined || value === '') return undefined
    if (!strictIpv4(value)) throw errors.subnetInvalid(`${field} must be an IPv4 address`)
    const n = ipToInt(value)
    if (n < first || n > last)
      throw errors.subnetInvalid(
        `${field} must be a usable address inside ${block.cidr} (${intToIp(first)} to ${intToIp(last)})`,
      )
    return n
  }
  const gateway = address('gateway', input.gateway) ?? first
  let start = address('dhcp_start', input.dhcp_start)
  let end = address('dhcp_end', input.dhcp_end)
  if (start === undefined || end === undefined) {
    // Default range: the larger run of usable addresses beside the gateway, clipped to what was given.
    const below: [number, number] = [first, gateway - 1]
    const above: [number, number] = [gateway + 1, last]
    const side = above[1] - above[0] >= below[1] - below[0] ? above : below
    start ??= end !== undefined && end < side[0] ? first : side[0]
    end ??= side[1] >= start ? side[1] : last
  }
  if (start > end) throw errors.subnetInvalid('dhcp_start must not come after dhcp_end')
  if (gateway >= start && gateway <= end) throw errors.subnetInvalid('the gateway must not be inside the DHCP range')
  return { cidr: block.cidr, gateway: intToIp(gateway), dhcpStart: intToIp(start), dhcpEnd: intToIp(end) }
}

/** The lowest address of the DHCP range that is neither taken nor the gateway, or null when none is left. */
export function firstFreeAddress(
  plan: { gateway: string; dhcp_start: string; dhcp_end: string },
  taken: string[],
): string | null {
  const used = new Set(taken.map(ipToInt))
  used.add(ipToInt(plan.gateway))
  for (let n = ipToInt(plan.dhcp_start); n <= ipToInt(plan.dhcp_end); n++) if (!used.has(n)) return intToIp(n)
  return null
}

/** A hostname as RFC 1123 allows: dot-separated labels of letters, digits and inner hyphens, 1–63 each, 253 in all. */
export function isHostname(name: string): boolean {
  if (name.length < 1 || name.length > 253) return false
  return name.split('.').every((l) => /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(l))
}

export const MAX_FIREWALL_RULES = 50

export interface FirewallRuleInput {
  direction?: string
  protocol: string
  port?: string | null
  source?: string
  description?: string
}

/** Checks and normalises firewall rules (ports `22` or `8000-8100`, sources as CIDR or a single address). */
export function normaliseFirewall(enabled: boolean, rules: FirewallRuleInput[]): FirewallConfig {
  if (rules.length > MAX_FIREWALL_RULES) throw errors.firewallTooManyRules(MAX_FIREWALL_RULES)
  const out: FirewallRule[] = rules.map((r, i) => {
    const n = i + 1
    const direction = r.direction ?? 'in'
    if (direction !== 'in') throw errors.firewallRule(n, 'direction must be in')
    if (r.protocol !== 'tcp' && r.protocol !== 'udp' && r.protocol !== 'icmp')
      throw errors.firewallRule(n, 'protocol must be tcp, udp or icmp')
    let port: string | null = null
    if (r.port !== undefined && r.port !== null && r.port !== '') {
      if (r.protocol === 'icmp') throw errors.firewallRule(n, 'icmp rules have no port')
      const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(r.port)
      const from = m ? Number(m[1]) : 0
      const to = m?.[2] !== undefined ? Number(m[2]) : from
      if (!m || from < 1 || to > 65535 || from > to)
        throw errors.firewallRule(n, 'port must be a port (1-65535) or a range such as 8000-8100')
      port = from === to ? String(from) : `${from}-${to}`
    }
    const source = normaliseSource(r.source ?? '0.0.0.0/0')
    if (!source) throw errors.firewallRule(n, 'source must be an IP address or a CIDR range')
    const description = (r.description ?? '').trim()
    if (description.length > 255) throw errors.firewallRule(n, 'description is at most 255 characters')
    return { direction: 'in', protocol: r.protocol, port, source, description }
  })
  return { enabled, rules: out }
}

function normaliseSource(source: string): string | null {
  try {
    if (source.includes('/')) {
      const [addr, prefix] = ipaddr.parseCIDR(source)
      const net =
        addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(source) : ipaddr.IPv6.networkAddressFromCIDR(source)
      return `${net.toString()}/${prefix}`
    }
    const addr = ipaddr.parse(source)
    return `${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`
  } catch {
    return null
  }
}
