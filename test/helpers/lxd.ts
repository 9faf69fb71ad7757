import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import { describe, it } from 'node:test'
import { stopOrKill } from './wait.js'
import { owned } from './children.js'

const run = promisify(execFile)
const LXD = ['/usr/bin/lxd', '/usr/sbin/lxd'].find((p) => fs.existsSync(p))
const LXC = ['/usr/bin/lxc', '/usr/sbin/lxc'].find((p) => fs.existsSync(p))
const BUSYBOX = ['/bin/busybox', '/usr/bin/busybox'].find((p) => fs.existsSync(p))

/** Why a private LXD cannot be started here, or false when it can. */
export function lxdMissing(): string | false {
  if (!LXD || !LXC) return 'lxd not installed (Debian package lxd)'
  if (!BUSYBOX) return 'busybox not installed (Debian package busybox-static)'
  if (!['/usr/sbin/nft', '/usr/bin/nft', '/sbin/nft'].some((p) => fs.existsSync(p)))
    return 'nft not installed (Debian package nftables): LXD writes its bridge firewall with it'
  if (process.getuid?.() !== 0) return 'LXD runs as root only'
  return false
}

/** describe(name, fn) when LXD can run; otherwise a skipped test of that name giving the reason. */
export function describeWithLxd(name: string, fn: () => void): void {
  const reason = lxdMissing()
  // node:test counts skipped tests in its summary but not skipped suites.
  if (reason) it(name, { skip: reason }, () => undefined)
  else describe(name, fn)
}

/** The images every test LXD holds: one busybox rootfs under two aliases (a reinstall changes the image). */
export const LXD_TEST_IMAGES = [
  { alias: 'busybox-1', id: 101, name: 'Busybox 1', family: 'busybox', version: '1' },
  { alias: 'busybox-2', id: 102, name: 'Busybox 2', family: 'busybox', version: '2' },
] as const

/** An lxd daemon of a test: its own state directory, a `dir` pool and a managed bridge with a subnet of its own. */
export interface Lxd {
  /** Its unix socket (HOSTAPI_LXD_URL). */
  socket: string
  pool: string
  network: string
  /** The bridge's address and prefix, e.g. 10.123.45.1/24. */
  subnet: string
  /** The /16 the accounts' networks are cut from (HOSTAPI_LXD_TENANT_SUBNETS), covered by no route of this machine. */
  tenantSubnets: string
  /** The settings that point hostapi at it. */
  env: Record<string, string>
  /** Runs the lxc command line against it. */
  lxc(...args: string[]): Promise<string>
  /** Runs a command inside an instance; its stdout. */
  exec(instance: string, command: string, input?: string): Promise<string>
  /** Stops the daemon, its instances and dnsmasq, removes its bridges and its state directory. */
  close(): Promise<void>
}

/** Runs a program with stdin closed (`lxc launch` and others read stdin when it is not a terminal). */
const sh = (file: string, args: string[], env?: NodeJS.ProcessEnv) =>
  new Promise<string>((resolve, reject) => {
    const p = execFile(file, args, { env, maxBuffer: 16 << 20, timeout: 120_000 }, (err, out, errOut) =>
      err ? reject(new Error(`${path.basename(file)} ${args.join(' ')}: ${errOut || err.message}`)) : resolve(out),
    )
    p.stdin?.end()
  })

/** A /16 in 10.20.0.0–10.99.255.255 that no route of this machine touches. */
async function freePool(): Promise<string> {
  const routes = await sh('ip', ['-4', 'route', 'show'])
  for (;;) {
    const net = `10.${20 + (randomBytes(1)[0] % 80)}`
    if (!routes.includes(`${net}.`)) return `${net}.0.0/16`
  }
}

/** A /24 in 10.0.0.0/8 that no route of this machine covers. */
async function freeSubnet(): Promise<string> {
  const routes = await sh('ip', ['-4', 'route', 'show'])
  for (;;) {
    const net = `10.${100 + (randomBytes(1)[0] % 150)}.${randomBytes(1)[0]}`
    if (!routes.includes(`${net}.`)) return `${net}.1/24`
  }
}

const INIT = `#!/bin/sh
# A tiny init: mounts, hostname, DHCP on eth0, a web server on port 80; SIGPWR (LXD's clean stop) ends it.
trap 'kill -TERM -1 2>/dev/null; exit 0' PWR TERM INT
mount -t proc proc /proc
mount -t sysfs sysfs /sys 2>/dev/null
mount -t tmpfs tmpfs /run
[ -s /etc/hostname ] && hostname -F /etc/hostname
ip link set lo up
ip link set eth0 up
udhcpc -i eth0 -s /usr/share/udhcpc/default.script -b -q -t 20 -T 1 >/dev/null 2>&1 &
mkdir -p /www && echo "hello from $(hostname)" > /www/index.html
httpd -p 80 -h /www
while :; do sleep 1 & wait $!; done
`
const DHCP_SCRIPT = `#!/bin/sh
case "$1" in
  bound|renew)
    ifconfig "$interface" "$ip" netmask "$subnet" up
    [ -n "$router" ] && route add default gw "\${router%% *}" dev "$interface" 2>/dev/null
    ;;
esac
exit 0
`

/** Builds a busybox rootfs and imports it as the test images. */
async function importImages(dir: string, lxc: Lxd['lxc']): Promise<void> {
  const root = path.join(dir, 'image', 'rootfs')
  for (const d of ['bin', 'sbin', 'etc', 'proc', 'sys', 'dev', 'tmp', 'root', 'run', 'var', 'usr/share/udhcpc'])
    fs.mkdirSync(path.join(root, d), { recursive: true })
  fs.copyFileSync(BUSYBOX!, path.join(root, 'bin/busybox'))
  fs.chmodSync(path.join(root, 'bin/busybox'), 0o755)
  for (const applet of (await sh(BUSYBOX!, ['--list'])).split('\n').filter(Boolean)) {
    const link = path.join(root, 'bin', applet)
    if (!fs.existsSync(link)) fs.symlinkSync('busybox', link)
  }
  fs.writeFileSync(path.join(root, 'sbin/init'), INIT, { mode: 0o755 })
  fs.writeFileSync(path.join(root, 'usr/share/udhcpc/default.script'), DHCP_SCRIPT, { mode: 0o755 })
  fs.writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n')
  fs.writeFileSync(path.join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o600 })
  fs.writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\n')
  fs.writeFileSync(path.join(root, 'etc/hostname'), 'busybox\n')
  const rootfsTar = path.join(dir, 'image', 'rootfs.tar.gz')
  await sh('tar', ['-C', root, '--numeric-owner', '-czf', rootfsTar, '.'])
  for (const image of LXD_TEST_IMAGES) {
    const meta = path.join(dir, 'image', image.alias)
    fs.mkdirSync(meta)
    fs.writeFileSync(
      path.join(meta, 'metadata.yaml'),
      [
        'architecture: x86_64',
        `creation_date: ${Math.floor(Date.now() / 1000)}`,
        'properties:',
        `  description: ${image.name}`,
        `  os: ${image.family}`,
        `  release: "${image.version}"`,
        `  hostapi.id: "${image.id}"`,
        '',
      ].join('\n'),
    )
    const metaTar = `${meta}.tar.gz`
    await sh('tar', ['-C', meta, '-czf', metaTar, 'metadata.yaml'])
    await lxc('image', 'import', metaTar, rootfsTar, '--alias', image.alias)
  }
}

/** Starts lxd in a fresh state directory with a `dir` pool, a bridge and the busybox test images. */
export async function startLxd(): Promise<Lxd> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-lxd-'))
  fs.chmodSync(dir, 0o755)
  const env = { ...process.env, LXD_DIR: dir }
  const tag = randomBytes(3).toString('hex')
  const pool = 'default'
  const network = `hbr${tag}`
  let child: ChildProcess | null = owned(
    spawn(LXD!, ['--group', 'lxd', '--logfile', path.join(dir, 'lxd.log')], { env, stdio: 'ignore' }),
  )
  const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()))
  const lxc: Lxd['lxc'] = (...args) => sh(LXC!, args, env)
  let subnet = ''
  let tenantSubnets = ''
  const close = async () => {
    if (child) {
      // Instances first (their processes and veths), then the bridge and its dnsmasq, then the daemon.
      await lxc('list', '--format', 'csv', '-c', 'n')
        .then((names) =>
          Promise.all(
            names
              .split('\n')
              .filter(Boolean)
              .map((n) => lxc('delete', '--force', n).catch(() => undefined)),
          ),
        )
        .catch(() => undefined)
      await lxc('network', 'list', '--format', 'csv')
        .then(async (rows) => {
          for (const row of rows.split('\n').filter((r) => r.includes(',YES,'))) {
            const name = row.split(',')[0]
            await lxc('network', 'delete', name).catch(() => undefined)
          }
        })
        .catch(() => undefined)
      await lxc('network', 'delete', network).catch(() => undefined)
      await stopOrKill(child, exited, 15_000)
      child = null
    }
    await run('ip', ['link', 'delete', network]).catch(() => undefined)
    await run('umount', ['-l', path.join(dir, 'shmounts')]).catch(() => undefined)
    await run('umount', ['-l', path.join(dir, 'devlxd')]).catch(() => undefined)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    await sh(LXD!, ['waitready', '--timeout', '60'], env)
    await lxc('storage', 'create', pool, 'dir')
    subnet = await freeSubnet()
    tenantSubnets = await freePool()
    const v6 = `fd42:${tag.slice(0, 4)}:${randomBytes(2).toString('hex')}:1::1/64`
    await lxc(
      'network',
      'create',
      network,
      `ipv4.address=${subnet}`,
      'ipv4.nat=false',
      `ipv6.address=${v6}`,
      'ipv6.nat=false',
      'ipv6.dhcp.stateful=true',
    )
    await importImages(dir, lxc)
  } catch (err) {
    await close()
    throw err
  }
  const socket = path.join(dir, 'unix.socket')
  return {
    socket,
    pool,
    network,
    subnet,
    tenantSubnets,
    env: {
      HOSTAPI_LXD_TENANT_SUBNETS: tenantSubnets,
      HOSTAPI_HYPERVISOR_DRIVER: 'lxd',
      HOSTAPI_LXD_URL: socket,
      HOSTAPI_LXD_STORAGE_POOL: pool,
      HOSTAPI_LXD_NETWORK: network,
      HOSTAPI_LXD_INSTANCE_TYPE: 'container',
    },
    lxc,
    async exec(instance, command, input) {
      return new Promise((resolve, reject) => {
        const p = execFile(LXC!, ['exec', instance, '--', 'sh', '-c', command], { env }, (err, out, errOut) =>
          err ? reject(new Error(`${command}: ${errOut || err.message}`)) : resolve(out),
        )
        p.stdin?.end(input ?? '')
      })
    },
    close,
  }
}
