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

/** Writes an instance's inbound rules as the network ACL named after it (created on first use). */
export async function putFirewall(lxd: LxdClient, ref: string, firewall: FirewallConfig): Promise<void> {
  const ingress = firewall.enabled
    ? firewall.rules.map((r) => ({
        action: 'allow',
        state: 'enabled',
        protocol: r.protocol,
        source: r.source,
        ...(r.port && r.protocol !== 'icmp' ? { destination_port: r.port } : {}),
        description: r.description.slice(0, 200),
      }))
    : [{ action: 'allow', state: 'enabled', description: 'firewall off' }]
  const body = { description: `hostapi firewall of ${ref}`, ingress, egress: [], config: {} }
  try {
    await lxd.call('PUT', `/1.0/network-acls/${ref}`, body)
  } catch (err) {
    if (!notFound(err)) return refused(err)
    await lxd.call('POST', '/1.0/network-acls', { name: ref, ...body }).catch((e) => refused(e))
  }
}

/** Reserves the first free floating address: a network forward without a target. */
export async function reserveFloating(lxd: LxdClient, s: FloatingSettings, location: string): Promise<string> {
  if (location !== s.location) throw new HypervisorError(`No floating addresses in ${location}`)
  const taken = new Set((await forwardsOf(lxd, s.network)).map((f) => f.listen_address))
  const ip = s.floatingIps.find((a) => !taken.has(a))
  if (!ip) throw new HypervisorError('No floating address is free')
  await lxd
    .call('POST', `/1.0/networks/${s.network}/forwards`, {
      listen_address: ip,
      description: 'hostapi floating IP',
    })
    .catch((err) => refused(err))
  return ip
}

/** Points a floating address's forward at an instance address, or nowhere (''). */
export async function routeFloating(lxd: LxdClient, s: FloatingSettings, ip: string, target: string): Promise<void> {
  const forward = (await forwardsOf(lxd, s.network)).find((f) => f.listen_address === ip)
  if (!forward) throw new HypervisorError(`${ip} is not reserved`)
  await lxd
    .call('PUT', `/1.0/networks/${s.network}/forwards/${ip}`, {
      description: forward.description,
      config: target ? { target_address: target } : {},
      ports: [],
    })
    .catch((err) => refused(err))
}

/** Gives a floating address back: its forward goes. */
export async function releaseFloating(lxd: LxdClient, s: FloatingSettings, ip: string): Promise<void> {
  await lxd.call('DELETE', `/1.0/networks/${s.network}/forwards/${ip}`).catch((err) => {
    if (!notFound(err)) return refused(err)
  })
}
