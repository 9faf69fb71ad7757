import { LxdError, type LxdClient } from './lxd-client.js'
import { HypervisorError, type Backup, type OsImage } from './hypervisor.js'

/** An LXD instance as `GET /1.0/instances/{name}` describes it (the fields the driver reads). */
export interface LxdInstance {
  name: string
  status: string
  location?: string
  config: Record<string, string>
  devices: Record<string, Record<string, string>>
  expanded_devices?: Record<string, Record<string, string>>
}

/** Keys of an instance's configuration that hold hostapi's own facts about it. */
export const KEY = {
  image: 'user.hostapi.image',
  hostname: 'user.hostapi.hostname',
  rescue: 'user.hostapi.rescue',
  rdns: 'user.hostapi.rdns',
  /** Hostname, root password and SSH keys waiting to be written into the guest once it runs. */
  setup: 'user.hostapi.setup',
  /** A private network's address in the guest, under `user.hostapi.vpc.<device>`. */
  vpc: 'user.hostapi.vpc.',
} as const

/** What a new or reinstalled guest receives once it runs. */
export interface GuestSetup {
  hostname: string
  password?: string
  sshKeys?: string[]
  /** Private network interfaces and their address (`10.0.0.2/24`), set in the guest. */
  networks?: { device: string; address: string }[]
}

/** The images the operator imported: each alias is an image slug; `hostapi.id` (a property) its stable id. */
export function imagesOf(
  list: { fingerprint: string; aliases: { name: string }[]; properties: Record<string, string> }[],
): OsImage[] {
  const out: OsImage[] = []
  for (const img of list) {
    const p = img.properties ?? {}
    const declared = Number(p['hostapi.id'])
    for (const [i, alias] of (img.aliases ?? []).entries()) {
      const id =
        Number.isSafeInteger(declared) && declared > 0 && i === 0
          ? declared
          : Number.parseInt(img.fingerprint.slice(0, 7), 16) + i
      out.push({
        id,
        slug: alias.name,
        name: p.description || alias.name,
        family: p.os || 'linux',
        version: p.release || p.version || '0',
      })
    }
  }
  return out.sort((a, b) => a.id - b.id)
}

/** Snapshots that are backups: `manual-<Unix time>` made through hostapi, `nightly-<YYYYMMDD>` by LXD's schedule. */
export function backupsOf(snaps: { name: string; created_at: string; size?: number }[]): Backup[] {
  const out: Backup[] = []
  for (const s of snaps) {
    const name = s.name.slice(s.name.lastIndexOf('/') + 1)
    const sizeMb = Math.max(1, Math.ceil((s.size ?? 0) / 1_048_576))
    let m = /^manual-(\d{9,10})$/.exec(name)
    if (m) {
      const key = Number(m[1])
      out.push({ type: 'manual', key, dateInternal: m[1], createdAt: new Date(key * 1000), sizeMb })
      continue
    }
    m = /^nightly-(\d{8})$/.exec(name)
    if (m)
      out.push({
        type: 'incremental',
        key: Number(m[1]),
        dateInternal: m[1],
        createdAt: new Date(s.created_at),
        sizeMb,
      })
  }
  return out.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
}

/** The snapshot name of a backup key. */
export const snapshotName = (key: number) => (key >= 1e9 ? `manual-${key}` : `nightly-${key}`)

/** The shell script that writes a guest's hostname, root password and SSH keys (values come in the environment). */
export function setupScript(setup: GuestSetup): { command: string[]; environment: Record<string, string> } {
  const lines = ['set -e', `printf '%s\\n' "$HV_HOSTNAME" > /etc/hostname`, `hostname "$HV_HOSTNAME" || true`]
  const environment: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HV_HOSTNAME: setup.hostname,
  }
  if (setup.password !== undefined) {
    environment.HV_PASSWORD = setup.password
    // chpasswd where the guest has it; a minimal guest (busybox) gets the hash written into /etc/shadow.
    lines.push(
      'if command -v chpasswd >/dev/null 2>&1; then',
      `  printf 'root:%s\\n' "$HV_PASSWORD" | chpasswd`,
      'else',
      `  h=$(printf '%s' "$HV_PASSWORD" | mkpasswd -m sha512)`,
      `  awk -v h="$h" 'BEGIN { FS = OFS = ":" } $1 == "root" { $2 = h } { print }' /etc/shadow > /etc/shadow.hv`,
      '  cat /etc/shadow.hv > /etc/shadow && rm -f /etc/shadow.hv',
      'fi',
    )
  }
  if (setup.sshKeys !== undefined) {
    environment.HV_KEYS = setup.sshKeys.map((k) => `${k.trim()}\n`).join('')
    lines.push(
      'mkdir -p /root/.ssh',
      'chmod 700 /root/.ssh',
      `printf '%s' "$HV_KEYS" > /root/.ssh/authorized_keys`,
      'chmod 600 /root/.ssh/authorized_keys',
    )
  }
  for (const [i, n] of (setup.networks ?? []).entries()) {
    environment[`HV_DEV${i}`] = n.device
    environment[`HV_ADDR${i}`] = n.address
    lines.push(`ip link set "$HV_DEV${i}" up`, `ip addr replace "$HV_ADDR${i}" dev "$HV_DEV${i}"`)
  }
  return { command: ['/bin/sh', '-c', lines.join('\n')], environment }
}

/** Runs a command in a running instance and waits for it; fails with its exit code. */
export async function execIn(
  lxd: LxdClient,
  name: string,
  run: { command: string[]; environment: Record<string, string> },
): Promise<void> {
  const id = await lxd.call('POST', `/1.0/instances/${name}/exec`, {
    ...run,
    'wait-for-websocket': false,
    interactive: false,
    'record-output': true,
  })
  if (!id) return
  const op = await lxd.wait(id, 60)
  const code = Number((op.metadata as { return?: number } | null)?.return ?? (op.status === 'Success' ? 0 : 1))
  if (op.status !== 'Success' || code !== 0)
    throw new HypervisorError(`The guest could not be configured (exit code ${code}${op.err ? `: ${op.err}` : ''})`)
}

/** The next free address of an IPv4 subnet (`10.1.2.1/24`, the gateway first) not in `used`. */
export function freeIpv4(gatewayCidr: string, used: Set<string>): string | null {
  const [gw, bitsText] = gatewayCidr.split('/')
  const bits = Number(bitsText)
  const toInt = (ip: string) => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0)
  const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.')
  const size = 2 ** (32 - bits)
  const base = toInt(gw) - (toInt(gw) % size)
  for (let n = base + 2; n < base + size - 1; n++) {
    const ip = toIp(n)
    if (ip !== gw && !used.has(ip)) return ip
  }
  return null
}

/** An IPv6 address in the network's /64 whose host part follows the IPv4 address's last two octets. */
export function ipv6For(gatewayCidr: string | undefined, ipv4: string): string {
  if (!gatewayCidr?.includes(':')) return ''
  const prefix = gatewayCidr.split('/')[0].replace(/::[0-9a-f]*$/i, '')
  const [, , c, d] = ipv4.split('.').map(Number)
  return `${prefix}::${((c << 8) | d).toString(16)}`
}

/** LXD said the object does not exist. */
export const notFound = (err: unknown) => err instanceof LxdError && err.status === 404

/** The private network addresses an instance's configuration records. */
export const vpcsOf = (config: Record<string, string>) =>
  Object.entries(config)
    .filter(([k]) => k.startsWith(KEY.vpc))
    .map(([k, address]) => ({ device: k.slice(KEY.vpc.length), address }))
