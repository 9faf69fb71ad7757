import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import readline from 'node:readline'
import { lineText } from '../../src/lib/log-line.js'
import { eventually, withDeadline } from './wait.js'
import { owned } from './children.js'
import { builtAt, newest, root } from '../../scripts/build-stamp.mjs'

export { lineText }

/**
 * The settings of a server process a test kills and starts again: its database's, free ports, the demo key (and an
 * admin token), quick job polls, and a short job lease, so a job the killed process held is taken up again soon.
 */
export const crashableServerEnv = (
  place: { env: Record<string, string> },
  key: string,
  admin?: string,
): Record<string, string> => ({
  ...place.env,
  HOSTAPI_PORT: '0',
  HOSTAPI_DNS_PORT: '0',
  HOSTAPI_DEMO_KEY: key,
  ...(admin ? { HOSTAPI_ADMIN_TOKEN: admin } : {}),
  HOSTAPI_JOB_POLL_MS: '50',
  HOSTAPI_JOB_LEASE_MS: '2000',
})

/** The processes descended from `top` (from /proc), deepest last. */
export function descendants(top: number): number[] {
  const parents = new Map<number, number>()
  for (const entry of fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // Ended meanwhile.
    }
  }
  const found: number[] = []
  for (let layer = [top]; layer.length; ) {
    layer = [...parents].filter(([, parent]) => layer.includes(parent)).map(([pid]) => pid)
    found.push(...layer)
  }
  return found
}

/** The command line's entry point in the sources. */
export const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname

/**
 * The arguments of node that run the command line: the build (`dist/src/cli/main.js`, what `npm start` runs) while
 * it is current — its last compile (scripts/build.mjs: `npm ci`, `npm test`) started after the last change to a
 * source under src/ — otherwise the sources through tsx (resolved here, so from any working directory), which load
 * several times slower (3 s against 0.4 s for `hostapi version` here; the suites start hundreds of processes).
 */
export const cliArgv: string[] =
  builtAt() >= newest(path.join(root, 'src'))
    ? [path.join(root, 'dist/src/cli/main.js')]
    : ['--import', import.meta.resolve('tsx'), cli]

export interface ServerProcess {
  child: ChildProcess
  /** Every line the process printed on stdout so far, as printed. */
  lines: string[]
  /** Resolves with the first stdout line whose text (lineText) matches `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
  /** The fact `name` of the first JSON line on stdout whose message matches `pattern` (the start's lines have them). */
  fact(pattern: RegExp, name: string): Promise<unknown>
  /**
   * The message of a start that failed: stderr holds exactly one JSON object (no stack trace), as a service manager
   * gets it. Call once the process has exited.
   */
  startError(): string
  /** Resolves once the process has exited and its output is closed: `lines` then holds all it printed. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** What the process printed on stderr so far. */
  stderr(): string
  /**
   * Sends `signal` (SIGTERM) to the process and to the processes under it, and resolves once all of them have ended:
   * a server started under a wrapper (`argv`, such as script(1) for a terminal) is not left running by the
   * wrapper's end; it takes a hang-up of its terminal for the TLS reload that SIGHUP asks for.
   */
  stop(signal?: NodeJS.Signals): Promise<void>
}

/**
 * Starts `hostapi serve` as its own process, as `npm start` does, with `env` on top of a minimal environment:
 * from the sources, or from a compiled entry point (`script`, run by plain node), or as the command `argv`.
 */
export function spawnServer(
  env: Record<string, string>,
  opts: { script?: string; argv?: string[]; cwd?: string } = {},
): ServerProcess {
  const args = opts.script ? [opts.script, 'serve'] : [...cliArgv, 'serve']
  const [command, ...rest] = opts.argv ?? [process.execPath, ...args]
  const child = owned(
    spawn(command, rest, {
      // No per-key limit unless the test sets one: suites that write as fast as the server answers (backup, crash and
      // durability suites) passed the default 1,200 a minute only while the machine was busy enough to slow them.
      // One process unless the test asks for workers (HOSTAPI_WORKERS), whatever the machine's cores.
      env: {
        PATH: process.env.PATH ?? '',
        HOSTAPI_LOG_LEVEL: 'warn',
        HOSTAPI_RATE_LIMIT: '1000000000',
        HOSTAPI_WORKERS: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    }),
  )
  const lines: string[] = []
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = []
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line)
    for (const w of [...waiters]) {
      const m = lineText(line).match(w.pattern)
      if (m) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(m)
      }
    }
  })
  let stderr = ''
  child.stderr!.on('data', (c) => (stderr += c))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  )
  const startError = () => {
    const all = stderr.trim().split('\n')
    if (all.length !== 1) throw new Error(`not one line on stderr: ${stderr}`)
    const entry = JSON.parse(all[0]!) as { level: number; msg: string }
    if (entry.level !== 60 || /\n\s+at /.test(JSON.stringify(entry))) throw new Error(`not a fatal line: ${stderr}`)
    return entry.msg
  }
  const server: ServerProcess = {
    child,
    lines,
    exited,
    stderr: () => stderr,
    startError,
    async stop(signal = 'SIGTERM') {
      const under = child.pid === undefined ? [] : descendants(child.pid)
      child.kill(signal)
      for (const pid of under) {
        try {
          process.kill(pid, signal)
        } catch {
          // Ended already.
        }
      }
      await exited
      await eventually(() => under.every((pid) => !fs.existsSync(`/proc/${pid}`)), {
        what: 'the processes under the stopped one end',
      })
    },
    async fact(pattern, name) {
      await server.waitFor(pattern)
      const line = lines.find((l) => l.startsWith('{') && pattern.test(lineText(l)))
      if (!line) throw new Error(`no JSON line matching ${pattern}: ${lines.join('\n')}`)
      return (JSON.parse(line) as Record<string, unknown>)[name]
    },
    waitFor(pattern, timeoutMs = 30_000) {
      const seen = lines.map((l) => lineText(l).match(pattern)).find(Boolean)
      if (seen) return Promise.resolve(seen)
      const waiter = { pattern, resolve: (_: RegExpMatchArray) => {} }
      const found = new Promise<RegExpMatchArray>((resolve, reject) => {
        waiter.resolve = resolve
        waiters.push(waiter)
        void exited.then(({ code }) =>
          reject(new Error(`server exited (${code}) before ${pattern}; stderr: ${stderr}`)),
        )
      })
      return withDeadline(found, timeoutMs, `a line matching ${pattern}`).catch((err: Error) => {
        if (waiters.includes(waiter)) waiters.splice(waiters.indexOf(waiter), 1)
        throw err.message.startsWith('server exited') ? err : new Error(`${err.message}; stderr: ${stderr}`)
      })
    },
  }
  return server
}

const run = promisify(execFile)

/** Runs `hostapi admin <args>` as its own process with `env`; rejects with the exit code and stderr when it fails. */
export async function runAdminCli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ out: string; err: string }> {
  const r = await run(process.execPath, [...cliArgv, 'admin', ...args], { env })
  return { out: r.stdout, err: r.stderr }
}

/** Runs `hostapi <args>` as its own process with `env`: its exit code and what it printed. */
export function runCli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...cliArgv, ...args], { env }, (err, out, errOut) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, out, err: errOut }),
    )
  })
}

/** The HTTPS origin a server process listens on, once it says so. */
export const originOf = async (p: ServerProcess): Promise<string> =>
  (await p.waitFor(/^hostapi listening on (https:\/\/\S+)/, 90_000))[1].replace(/\/api\/v2$/, '')

/**
 * Runs `cause` against a server process armed to kill itself at the crash point `point` (HOSTAPI_CRASH_AT), waits
 * for the SIGKILL, and starts the server again without it: answers the new process and its origin. `cause` gets
 * the first process's origin; its request may die with the process.
 */
export async function crashAndRestart(
  env: Record<string, string>,
  point: string,
  cause: (origin: string) => Promise<unknown>,
): Promise<{ server: ServerProcess; origin: string }> {
  const armed = spawnServer({ ...env, HOSTAPI_CRASH_AT: point })
  try {
    await cause(await originOf(armed)).catch(() => undefined)
    const { signal } = await withDeadline(armed.exited, 60_000, `killed at ${point}`)
    if (signal !== 'SIGKILL') throw new Error(`the process armed at ${point} ended with ${signal}: ${armed.stderr()}`)
  } finally {
    armed.child.kill('SIGKILL')
  }
  const server = spawnServer(env)
  return { server, origin: await originOf(server) }
}
