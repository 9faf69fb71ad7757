// The per-request budget of `npm run bench`: what hostapi spends per cached read beside the ceiling (a bare node:https
// server answering the same bytes), and where it goes. A profile run starts the server (and the ceiling) under V8's
// sampling profiler, loads each scenario for a few seconds, and charges every sample taken while the load ran to the
// component whose code was running: a file of hostapi, a package, or Node's own HTTP, TLS and socket code.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { dist, load, waitForLine } from './harness.js'

/** The profiler's sampling interval, in µs. */
const INTERVAL_US = 100
export const profileSeconds = Number(process.env.BENCH_PROFILE_SECONDS ?? 4)

/** One scenario's profile: the share of the server's samples by component. */
export interface Breakdown {
  requests: number
  /** Component → share of the samples taken while the scenario's load ran (0 to 1). */
  shares: Record<string, number>
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** The monotonic clock V8's profiler stamps its samples with, in µs. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n)

/** Node's own code (HTTP, TLS, streams, sockets) and the native functions it calls. */
const NODE = 'node: HTTP, TLS, sockets'

/** The component a frame's code belongs to, or null for Node's own code. */
function componentOf(url: string): string | null {
  const src = url.indexOf('/dist/src/')
  if (src >= 0) return `hostapi: ${url.slice(src + 10).replace(/\.js$/, '')}`
  const mod = url.lastIndexOf('/node_modules/')
  if (mod >= 0) {
    const [scope, name] = url.slice(mod + 14).split('/')
    return scope.startsWith('@') ? `${scope}/${name}` : scope
  }
  if (url.startsWith('file:')) return path.basename(url).replace(/\.js$/, '')
  return null
}

/** CPU time (user and system) a process has used so far, in µs; from /proc, so Linux only (null elsewhere). */
export function cpuTimeUs(pid: number | undefined): number | null {
  if (pid === undefined) return null
  try {
    // The fields after the command's name (which is in parentheses and may hold spaces): utime and stime are the
    // 12th and 13th, in clock ticks of 1/100 s (USER_HZ on Linux).
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    return null
  }
}

/**
 * Charges each sample between `fromUs` and `toUs` to the component of the function it caught running. The profiler
 * costs CPU of its own, so a profiled run gives proportions only; the CPU time is measured in the unprofiled run.
 */
export function attribute(profile: CpuProfile, window: { fromUs: number; toUs: number; requests: number }): Breakdown {
  const { fromUs, toUs, requests } = window
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parts: Record<string, number> = {}
  let t = profile.startTime
  let busy = 0
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]
    if (t < fromUs || t > toUs) continue
    const frame = byId.get(profile.samples[i])?.callFrame
    if (!frame || frame.functionName === '(idle)') continue
    const part =
      frame.functionName === '(garbage collector)'
        ? 'garbage collection'
        : frame.functionName === '(program)'
          ? 'V8 (compiling, native)'
          : (componentOf(frame.url) ?? NODE)
    parts[part] = (parts[part] ?? 0) + 1
    busy++
  }
  return { requests, shares: Object.fromEntries(Object.entries(parts).map(([k, n]) => [k, n / busy])) }
}

/** A load of `profileSeconds` after a short warm-up, timed on the profiler's clock. */
function profiledLoad(url: string, method: string, headers: Record<string, string>) {
  load(url, method, headers, undefined, { warmupSeconds: 0, durationSeconds: 1 })
  const fromUs = nowUs()
  const figures = load(url, method, headers, undefined, { warmupSeconds: 0, durationSeconds: profileSeconds })
  return { fromUs, toUs: nowUs(), requests: figures.requests }
}

/** `node --cpu-prof` for a server started by `args`; the profile is written when the process ends. */
export function profiledProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  dir: string,
): { child: ChildProcess; profile: () => Promise<CpuProfile> } {
  fs.mkdirSync(dir, { recursive: true })
  const child = spawn(
    process.execPath,
    ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', String(INTERVAL_US), ...args],
    { env, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exited = new Promise((r) => child.once('exit', r))
  return {
    child,
    profile: async () => {
      child.kill('SIGTERM')
      await exited
      const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
      if (!file) throw new Error(`no CPU profile in ${dir}`)
      const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as CpuProfile
      fs.rmSync(dir, { recursive: true, force: true })
      return profile
    },
  }
}

export interface ProfileTarget {
  name: string
  method: string
  /** Relative to the server's base URL. */
  path: string
}

/**
 * Profiles hostapi (its compiled modules, not the single-file bundle, so each sample names its file) under each
 * target's load, one server for all of them, started with `env`.
 */
export async function profileHostapi(
  env: NodeJS.ProcessEnv,
  dir: string,
  targets: ProfileTarget[],
  headers: Record<string, string>,
): Promise<Record<string, Breakdown>> {
  const server = profiledProcess([dist('src/cli/cli.js'), 'serve'], env, dir)
  const windows: ({ name: string } & ReturnType<typeof profiledLoad>)[] = []
  let profile: CpuProfile
  try {
    const [, base] = await waitForLine(server.child, /^hostapi listening on (\S+)/)
    for (const t of targets) windows.push({ name: t.name, ...profiledLoad(`${base}${t.path}`, t.method, headers) })
  } finally {
    profile = await server.profile()
  }
  return Object.fromEntries(windows.map((w) => [w.name, attribute(profile, w)]))
}

/** Profiles the ceiling answering one scenario's bytes (started by `env` as bench/run.ts starts it). */
export async function profileCeiling(env: NodeJS.ProcessEnv, dir: string, url: (port: string) => string) {
  const server = profiledProcess([dist('bench/servers/ceiling.js')], env, dir)
  let window: ReturnType<typeof profiledLoad>
  let profile: CpuProfile
  try {
    const [, port] = await waitForLine(server.child, /^ready (\d+)/)
    window = profiledLoad(url(port), 'GET', {})
  } finally {
    profile = await server.profile()
  }
  return attribute(profile, window)
}

/** One cached read as the budget shows it: both servers' figures of the measured run, and their profiles. */
export interface BudgetRow {
  scenario: string
  ceiling: { rps: number; cpuUs?: number; profile?: Breakdown }
  hostapi: { rps: number; cpuUs?: number; profile?: Breakdown }
}

/**
 * The budget tables: per scenario, the wall time and the CPU time (all threads of the process) per request of the
 * ceiling and of hostapi, and hostapi's CPU time per request shared out by component in the profile's proportions.
 */
export function budgetTables(table: (header: string[], rows: string[][]) => string[], rows: BudgetRow[]): string[] {
  const us = (x: number | undefined) => (x === undefined ? '' : x.toFixed(0))
  const out = table(
    ['scenario', 'wall µs/req: ceiling', 'hostapi', 'above', 'CPU µs/req: ceiling', 'hostapi', 'above'],
    rows.map(({ scenario, ceiling, hostapi }) => [
      scenario,
      us(1e6 / ceiling.rps),
      us(1e6 / hostapi.rps),
      us(1e6 / hostapi.rps - 1e6 / ceiling.rps),
      us(ceiling.cpuUs),
      us(hostapi.cpuUs),
      ceiling.cpuUs !== undefined && hostapi.cpuUs !== undefined ? us(hostapi.cpuUs - ceiling.cpuUs) : '',
    ]),
  )
  const profiled = rows.filter((r) => r.hostapi.profile && r.hostapi.cpuUs !== undefined)
  if (!profiled.length) return out
  const cpuOf = (side: BudgetRow['hostapi'], k: string) =>
    side.profile?.shares[k] === undefined || side.cpuUs === undefined ? undefined : side.profile.shares[k] * side.cpuUs
  // Components by their largest figure in any scenario; those under 1 µs everywhere summed.
  const largest: Record<string, number> = {}
  for (const r of profiled)
    for (const k of Object.keys(r.hostapi.profile!.shares)) largest[k] = Math.max(largest[k] ?? 0, cpuOf(r.hostapi, k)!)
  const named = Object.keys(largest)
    .filter((k) => largest[k] >= 1)
    .sort((a, b) => largest[b] - largest[a])
  const cell = (r: BudgetRow, k: string) => {
    const h = cpuOf(r.hostapi, k)
    const c = cpuOf(r.ceiling, k)
    return `${h === undefined ? '' : h.toFixed(1)}${c === undefined ? '' : ` (${c.toFixed(1)})`}`
  }
  const rest = (r: BudgetRow) =>
    Object.keys(r.hostapi.profile!.shares)
      .filter((k) => !named.includes(k))
      .reduce((a, k) => a + cpuOf(r.hostapi, k)!, 0)
      .toFixed(1)
  out.push(
    '',
    "hostapi's CPU µs per request by the code that ran, in the proportions of a profiled run (the ceiling's in brackets):",
    '',
    ...table(
      ['component', ...profiled.map((r) => r.scenario)],
      [
        ...named.map((k) => [k, ...profiled.map((r) => cell(r, k))]),
        ['other (under 1 µs each)', ...profiled.map(rest)],
      ],
    ),
  )
  return out
}
