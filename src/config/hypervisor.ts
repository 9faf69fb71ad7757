import path from 'node:path'
import ipaddr from 'ipaddr.js'
import type { EnvReader } from './env-reader.js'

/** The LXD driver's settings; the client certificate, key and CA are file paths read when the driver starts. */
export interface LxdConfig {
  url: string
  clientCertFile: string | null
  clientKeyFile: string | null
  caFile: string | null
  project: string
  storagePool: string
  network: string
  instanceType: 'container' | 'virtual-machine'
  location: string
  floatingIps: string[]
  privateNetworkPrefix: string
  tenantSubnets: string
  tenantPrefix: number
}

const LXD_VARS = [
  'HOSTAPI_LXD_URL',
  'HOSTAPI_LXD_CLIENT_CERT',
  'HOSTAPI_LXD_CLIENT_KEY',
  'HOSTAPI_LXD_CA',
  'HOSTAPI_LXD_PROJECT',
  'HOSTAPI_LXD_STORAGE_POOL',
  'HOSTAPI_LXD_NETWORK',
  'HOSTAPI_LXD_INSTANCE_TYPE',
  'HOSTAPI_LXD_LOCATION',
  'HOSTAPI_LXD_FLOATING_IPS',
  'HOSTAPI_LXD_PRIVATE_NETWORK_PREFIX',
  'HOSTAPI_LXD_TENANT_SUBNETS',
  'HOSTAPI_LXD_TENANT_PREFIX',
] as const

const FLOATING_MAX = 65_536

/** The addresses of HOSTAPI_LXD_FLOATING_IPS: IPv4 addresses and CIDR ranges, comma separated. */
function floatingIps(r: EnvReader): string[] {
  const out: string[] = []
  for (const item of (r.env.HOSTAPI_LXD_FLOATING_IPS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    try {
      const [addr, bits] = item.includes('/') ? ipaddr.parseCIDR(item) : [ipaddr.parse(item), 32]
      if (addr.kind() !== 'ipv4' || 32 - bits > 16) throw new Error('range')
      const start = ipaddr.IPv4.networkAddressFromCIDR(`${addr.toString()}/${bits}`).toByteArray()
      const base = start.reduce((a, o) => a * 256 + o, 0)
      const size = 2 ** (32 - bits)
      // A range's network and broadcast addresses are not handed out (a /31 or /32 has neither).
      const [first, last] = size > 2 ? [1, size - 2] : [0, size - 1]
      for (let n = first; n <= last && out.length < FLOATING_MAX; n++)
        out.push([24, 16, 8, 0].map((s) => Math.floor((base + n) / 2 ** s) % 256).join('.'))
    } catch {
      r.problem(`HOSTAPI_LXD_FLOATING_IPS must list IPv4 addresses or ranges of at most /16 (got "${item}")`)
    }
  }
  return [...new Set(out)]
}

/** HOSTAPI_LXD_TENANT_SUBNETS (an IPv4 range) and HOSTAPI_LXD_TENANT_PREFIX: every account's subnet is cut from it. */
function tenantPool(r: EnvReader): { tenantSubnets: string; tenantPrefix: number } {
  const raw = r.env.HOSTAPI_LXD_TENANT_SUBNETS || '10.144.0.0/12'
  let tenantSubnets = '10.144.0.0/12'
  let bits = 12
  try {
    const [addr, b] = ipaddr.parseCIDR(raw)
    if (addr.kind() !== 'ipv4' || b < 8 || b > 28) throw new Error('range')
    tenantSubnets = `${ipaddr.IPv4.networkAddressFromCIDR(raw).toString()}/${b}`
    bits = b
  } catch {
    r.problem(`HOSTAPI_LXD_TENANT_SUBNETS must be an IPv4 range from /8 to /28 (got "${raw}")`)
  }
  const tenantPrefix = r.int('HOSTAPI_LXD_TENANT_PREFIX', 24, 16, 29)
  if (tenantPrefix <= bits || tenantPrefix - bits > 16)
    r.problem(
      `HOSTAPI_LXD_TENANT_PREFIX must leave at most 65536 subnets of HOSTAPI_LXD_TENANT_SUBNETS (got /${bits} and /${tenantPrefix})`,
    )
  return { tenantSubnets, tenantPrefix }
}

/** The hypervisor behind the VPS area: the built-in simulator, or LXD (HOSTAPI_HYPERVISOR_DRIVER=lxd). */
/** Which hypervisor runs the VPS: the built-in simulator, or LXD (or Incus). */
export interface HypervisorConfig {
  driver: 'builtin' | 'lxd'
  simSpeed: number
  shutdownTimeoutSeconds: number
  lxd: LxdConfig | null
}

export function hypervisorConfig(r: EnvReader): HypervisorConfig {
  const { env } = r
  const base = {
    simSpeed: r.positive('HOSTAPI_SIM_SPEED', 1),
    shutdownTimeoutSeconds: r.int('HOSTAPI_VPS_SHUTDOWN_TIMEOUT', 120, 1, 3600),
  }
  const driver = env.HOSTAPI_HYPERVISOR_DRIVER || 'builtin'
  if (driver === 'builtin') {
    const set = LXD_VARS.filter((v) => env[v])
    if (set.length) r.problem(`${set.join(', ')} apply to HOSTAPI_HYPERVISOR_DRIVER=lxd only`)
    return { driver: 'builtin', ...base, lxd: null }
  }
  if (driver !== 'lxd') {
    r.problem(`HOSTAPI_HYPERVISOR_DRIVER must be builtin or lxd (got "${driver}")`)
    return { driver: 'builtin', ...base, lxd: null }
  }
  const url = env.HOSTAPI_LXD_URL || '/var/lib/lxd/unix.socket'
  const https = /^https:\/\/[^\s/]+\/?$/i.test(url)
  if (!https && !url.startsWith('/'))
    r.problem(`HOSTAPI_LXD_URL must be a unix socket path or an https:// URL (got "${url}")`)
  const file = (name: string) => {
    const value = env[name]
    return value ? path.resolve(value) : null
  }
  const clientCertFile = file('HOSTAPI_LXD_CLIENT_CERT')
  const clientKeyFile = file('HOSTAPI_LXD_CLIENT_KEY')
  if (https && (!clientCertFile || !clientKeyFile))
    r.problem('HOSTAPI_LXD_CLIENT_CERT and HOSTAPI_LXD_CLIENT_KEY must be set for an https:// HOSTAPI_LXD_URL')
  const instanceType = env.HOSTAPI_LXD_INSTANCE_TYPE || 'container'
  if (instanceType !== 'container' && instanceType !== 'virtual-machine')
    r.problem(`HOSTAPI_LXD_INSTANCE_TYPE must be container or virtual-machine (got "${instanceType}")`)
  const name = (v: string, def: string, max: number) => {
    const raw = env[v] || def
    if (!new RegExp(`^[a-z][a-z0-9-]{0,${max - 1}}$`, 'i').test(raw))
      r.problem(`${v} must be a name of letters, digits and dashes, at most ${max} long (got "${raw}")`)
    return raw
  }
  return {
    driver: 'lxd',
    ...base,
    lxd: {
      url,
      clientCertFile,
      clientKeyFile,
      caFile: file('HOSTAPI_LXD_CA'),
      project: name('HOSTAPI_LXD_PROJECT', 'default', 63),
      storagePool: name('HOSTAPI_LXD_STORAGE_POOL', 'default', 63),
      network: name('HOSTAPI_LXD_NETWORK', 'lxdbr0', 15),
      instanceType: instanceType === 'virtual-machine' ? 'virtual-machine' : 'container',
      location: name('HOSTAPI_LXD_LOCATION', 'ams', 32),
      floatingIps: floatingIps(r),
      // Bridge names are at most 15 characters: the prefix leaves room for the private network's id.
      privateNetworkPrefix: name('HOSTAPI_LXD_PRIVATE_NETWORK_PREFIX', 'hvpc', 6),
      ...tenantPool(r),
    },
  }
}
