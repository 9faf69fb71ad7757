import type { LxdClient } from './lxd-client.js'
import { LxdError } from './lxd-client.js'
import { HypervisorError, type FirewallConfig } from './hypervisor.js'
import { notFound } from './lxd-parts.js'

/** The network settings the floating IPs need. */
interface FloatingSettings {
  network: string
  location: string
  floatingIps: string[]
}

/** An LXD refusal (4xx) becomes the hypervisor's refusal with LXD's text; LXD unreachable stays an error. */
export function refused(err: unknown): never {
  if (err instanceof LxdError && err.status >= 400 && err.status < 500) throw new HypervisorError(err.message)
  throw err
}

/** The network forwards of a network: floating IPs (listen addresses) and the instance address they go to. */
export function forwardsOf(lxd: LxdClient, network: string) {
  return lxd.get<{ listen_address: string; description: string; config: Record<string, string> }[]>(
    `/1.0/networks/${network}/forwards?recursion=1`,
  )
}

/**
 * Writes an instance's inbound rules as the network ACL named after it (created on first use); every rule is aimed
 * at the instance's own addresses, so the ACLs of all instances of an account can sit on its one network.
 */
export async function putFirewall(
  lxd: LxdClient,
  ref: string,
  firewall: FirewallConfig,
  addresses: (string | undefined)[],
): Promise<void> {
  const own = addresses.filter(Boolean) as string[]
  const ingress = (
    firewall.enabled
      ? firewall.rules.map((r) => ({
          action: 'allow',
          state: 'enabled',
          protocol: r.protocol,
          source: r.source,
          ...(r.port && r.protocol !== 'icmp' ? { destination_port: r.port } : {}),
          description: r.description.slice(0, 200),
        }))
      : [{ action: 'allow', state: 'enabled', description: 'firewall off' }]
  ).flatMap((rule) => {
    // LXD takes one address family per rule: an IPv4 source goes to the IPv4 address, an IPv6 one to the IPv6.
    const src = (rule as { source?: string }).source
    const targets = own.filter((a) => !src || src.includes(':') === a.includes(':'))
    return targets.map((destination) => ({ ...rule, destination }))
  })
  const body = { description: `hostapi firewall of ${ref}`, ingress, egress: [], config: {} }
  try {
    await lxd.call('PUT', `/1.0/network-acls/${ref}`, body)
  } catch (err) {
    if (!notFound(err)) return refused(err)
    await lxd.call('POST', '/1.0/network-acls', { name: ref, ...body }).catch((e) => refused(e))
  }
}

/** Every forward of the floating network and of the accounts' networks, with the network it is on. */
async function allForwards(lxd: LxdClient, s: FloatingSettings) {
  const nets =
    await lxd.get<{ name: string; managed: boolean; config: Record<string, string> }[]>('/1.0/networks?recursion=1')
  const names = [s.network, ...nets.filter((n) => n.config?.['user.hostapi.tenant']).map((n) => n.name)]
  const out: { network: string; listen_address: string; config: Record<string, string> }[] = []
  for (const network of names) for (const f of await forwardsOf(lxd, network)) out.push({ network, ...f })
  return out
}

const FLOATING = 'hostapi floating IP'

/** Reserves the first free floating address: a network forward without a target on the floating network. */
export async function reserveFloating(lxd: LxdClient, s: FloatingSettings, location: string): Promise<string> {
  if (location !== s.location) throw new HypervisorError(`No floating addresses in ${location}`)
  const taken = new Set((await allForwards(lxd, s)).map((f) => f.listen_address))
  const ip = s.floatingIps.find((a) => !taken.has(a))
  if (!ip) throw new HypervisorError('No floating address is free')
  await lxd
    .call('POST', `/1.0/networks/${s.network}/forwards`, { listen_address: ip, description: FLOATING })
    .catch((err) => refused(err))
  return ip
}

/**
 * Points a floating address's forward at an instance address on `network`, or nowhere (target ''; back on the
 * floating network). LXD forwards only to an address of the forward's own network (measured: "Default target
 * address is not within the network subnet"), so a forward moves to the account network of the instance it points at.
 */
export async function routeFloating(
  lxd: LxdClient,
  s: FloatingSettings,
  ip: string,
  target: { address: string; network: string } | null,
): Promise<void> {
  const network = target?.network ?? s.network
  const config = target ? { target_address: target.address } : {}
  const current = (await allForwards(lxd, s)).find((f) => f.listen_address === ip)
  if (!current) throw new HypervisorError(`${ip} is not reserved`)
  if (current.network === network) {
    await lxd
      .call('PUT', `/1.0/networks/${network}/forwards/${ip}`, { description: FLOATING, config, ports: [] })
      .catch((err) => refused(err))
    return
  }
  await lxd.call('DELETE', `/1.0/networks/${current.network}/forwards/${ip}`).catch((e) => refused(e))
  await lxd
    .call('POST', `/1.0/networks/${network}/forwards`, { listen_address: ip, description: FLOATING, config })
    .catch((err) => refused(err))
}

/** Gives a floating address back: its forward goes, wherever it is. */
export async function releaseFloating(lxd: LxdClient, s: FloatingSettings, ip: string): Promise<void> {
  const current = (await allForwards(lxd, s)).find((f) => f.listen_address === ip)
  if (!current) return
  await lxd.call('DELETE', `/1.0/networks/${current.network}/forwards/${ip}`).catch((err) => {
    if (!notFound(err)) return refused(err)
  })
}
