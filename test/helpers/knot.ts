import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn, type ChildProcess } from 'node:child_process'
import { describe, it } from 'node:test'
import { freePort, queryUdp } from './dns.js'
import { eventually, stopOrKill } from './wait.js'
import { owned } from './children.js'

const KNOTD_PATHS = ['/usr/sbin/knotd', '/usr/bin/knotd']
const knotd = () => KNOTD_PATHS.find((p) => fs.existsSync(p))

/** Why a real Knot DNS cannot be started here, or false when it can. */
export function knotMissing(): string | false {
  return knotd() ? false : 'knotd not installed'
}

/** describe(name, fn) when knotd can run; otherwise a skipped test of that name giving the reason. */
export function describeWithKnot(name: string, fn: () => void): void {
  const reason = knotMissing()
  // node:test counts skipped tests in its summary but not skipped suites.
  if (reason) it(name, { skip: reason }, () => undefined)
  else describe(name, fn)
}

/** What the secondary is set up with. */
export interface KnotOptions {
  /** The zones it serves as a secondary. */
  zones: string[]
  /** The primary (hostapi's built-in server) on 127.0.0.1. */
  primaryPort: number
  /** More primaries on 127.0.0.1, asked in this order after `primaryPort` (several instances of hostapi). */
  morePrimaryPorts?: number[]
  /**
   * A catalog zone (RFC 9432) to transfer from the primaries and interpret: its member zones are served as
   * secondaries of the same primaries, without being listed in `zones`.
   */
  catalog?: string
  /** A TSIG key (hmac-sha256) for transfers from and NOTIFY by the primary. */
  tsig?: { name: string; secret: string }
  /** Its port on 127.0.0.1 (default: a free one). */
  port?: number
}

/** A knotd of a test: a secondary on 127.0.0.1, with its configuration and storage in a temporary directory. */
export interface Knot {
  /** Its DNS port (UDP and TCP) on 127.0.0.1. */
  port: number
  /** What it has logged so far. */
  output(): string
  /** Stops the process (SIGTERM); its zones stay in its directory. */
  stop(): Promise<void>
  /** Starts it again on the same port, with what it stored; resolves once it answers. */
  start(): Promise<void>
  /** Stops the process and removes its directory. */
  close(): Promise<void>
}

/** Starts knotd as a secondary of the primary; resolves once it answers queries (not once it holds the zones). */
export async function startKnot(opts: KnotOptions): Promise<Knot> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-knot-'))
  const port = opts.port ?? (await freePort())
  const key = opts.tsig ? `    key: ${opts.tsig.name}\n` : ''
  const primaries = [opts.primaryPort, ...(opts.morePrimaryPorts ?? [])]
  const remotes = primaries.flatMap((p, i) => [`  - id: primary${i}`, `    address: 127.0.0.1@${p}`, key.trimEnd()])
  const master = `    master: [${primaries.map((_, i) => `primary${i}`).join(', ')}]`
  const zoneTemplate = [`    storage: ${dir}`, master, '    acl: notify_from_primary', '    zonefile-sync: -1']
  fs.writeFileSync(
    path.join(dir, 'knot.conf'),
    `${[
      'server:',
      `    listen: 127.0.0.1@${port}`,
      `    rundir: ${dir}`,
      'log:',
      '  - target: stderr',
      '    any: info',
      'database:',
      `    storage: ${dir}`,
      ...(opts.tsig
        ? ['key:', `  - id: ${opts.tsig.name}`, '    algorithm: hmac-sha256', `    secret: ${opts.tsig.secret}`]
        : []),
      'remote:',
      ...remotes,
      'acl:',
      '  - id: notify_from_primary',
      '    address: 127.0.0.1',
      key.trimEnd(),
      '    action: notify',
      'template:',
      '  - id: default',
      ...zoneTemplate,
      '    zonefile-load: none',
      '    journal-content: none',
      ...(opts.catalog
        ? ['  - id: member', ...zoneTemplate, '    zonefile-load: none', '    journal-content: none']
        : []),
      'zone:',
      ...opts.zones.map((z) => `  - domain: ${z}`),
      ...(opts.catalog
        ? [`  - domain: ${opts.catalog}`, '    catalog-role: interpret', '    catalog-template: member']
        : []),
      '',
    ]
      .filter((l) => l !== '')
      .join('\n')}\n`,
  )
  let output = ''
  const conf = path.join(dir, 'knot.conf')
  let child: ChildProcess
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    await stopOrKill(child, new Promise((r) => child.once('exit', r)), 5000)
  }
  const start = async () => {
    child = owned(spawn(knotd()!, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] }))
    child.stdout!.on('data', (d) => (output += d))
    child.stderr!.on('data', (d) => (output += d))
    await eventually(() => queryUdp(port, 'ready.invalid', 'SOA', { timeoutMs: 200 }), {
      what: 'knotd answers',
      timeoutMs: 15_000,
      failIf: () => child.exitCode !== null && `knotd exited (${child.exitCode})`,
    }).catch(async (err: Error) => {
      await stop()
      throw new Error(`${err.message}:\n${output}`)
    })
  }
  try {
    await start()
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true })
    throw err
  }
  return {
    port,
    output: () => output,
    stop,
    start,
    async close() {
      await stop()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}
