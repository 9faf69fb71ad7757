// `hostapi serve`: starts the server, says where it listens, and runs it until a signal (or the end of the npm
// process that started it) stops it.
import pino, { type Logger } from 'pino'
import type { Config } from '../config/config.js'
import { readableLogLine } from '../lib/log-line.js'
import cluster from 'node:cluster'
import { startServer, type RunningServer, type ServerOptions } from '../server.js'
import { askRole, runPrimary, shareMetrics, tellReady, workerCounter } from '../cluster.js'
import { announce, type Announcement, type Say } from './start-lines.js'

/**
 * How long a stop waits for in-flight requests and jobs before the process exits anyway (status 1). A job cut
 * short is taken up again once its lease runs out, as after a crash. A service manager's stop timeout must be longer.
 */
export const DRAIN_MS = 30_000
/** How often a process started by npm checks that its parent is still the one that started it. */
const PARENT_CHECK_MS = 500

/**
 * Where the process's own lines go. On a terminal the log is read by a person: readable lines, and the start's
 * lines as text. Elsewhere (a pipe, a file, a service manager) everything on stdout is JSON, one object per line:
 * pino's log, and the start's lines with their facts as fields and their text as `msg`.
 */
export function serveOutput(config: Config) {
  if (process.stdout.isTTY) {
    const write = (line: string) => process.stdout.write(readableLogLine(line))
    return {
      log: pino({ level: config.logLevel }, { write }) as Logger,
      say: ((text) => void process.stdout.write(`${text}\n`)) as Say,
    }
  }
  // The start's lines are said whatever the log level (through process.stdout, written at once on a pipe or a file).
  const lines = pino({ level: 'info' }, process.stdout)
  return { log: undefined, say: ((text, facts) => lines.info(facts, text)) as Say }
}

/**
 * Starts the server and serves until SIGTERM or SIGINT; SIGHUP reloads the TLS certificate and key. With more than
 * one worker (HOSTAPI_WORKERS, `--workers`) this process is the primary that forks them (src/cluster.ts), or one of them.
 */
export async function serve(config: Config): Promise<void> {
  const { log: terminalLog, say } = serveOutput(config)
  if (config.workers.count > 1) {
    if (cluster.isPrimary) return runPrimary(config, say, terminalLog, DRAIN_MS)
    const role = await askRole()
    const counter = config.redisUrl ? undefined : workerCounter()
    const server = await serveUntilStopped(config, {
      ...(terminalLog ? { log: terminalLog } : {}),
      worker: role,
      counter,
    })
    shareMetrics(server.running.ctx.ops.metrics)
    // A worker whose primary is gone (killed) stops as on SIGTERM.
    process.once('disconnect', () => server.stop({ primary: process.ppid }, 'the primary process ended'))
    tellReady(announcement(server.running))
    return
  }
  const server = await serveUntilStopped(config, terminalLog ? { log: terminalLog } : {})
  if (config.workers.pinned) say(config.workers.pinned, { workers: 1 })
  // Said once the signals are handled: a supervisor that acts on these lines finds them handled.
  announce(announcement(server.running), say)
}

/** Starts the server with its signals handled: `stop` finishes in-flight requests and jobs, then exits. */
async function serveUntilStopped(config: Config, opts: ServerOptions) {
  const running = await startServer(config, opts)
  const log = running.ctx.log
  let stopping = false
  const stop = (facts: Record<string, unknown>, why: string) => {
    if (stopping) return
    stopping = true
    log.info(facts, `${why}: finishing in-flight requests and jobs`)
    setTimeout(() => {
      log.error({ drainMs: DRAIN_MS }, `shutdown did not finish within ${DRAIN_MS / 1000} s: exiting`)
      process.exit(1)
    }, DRAIN_MS).unref()
    running.close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop({ signal: 'SIGTERM' }, 'shutting down'))
  process.on('SIGINT', () => stop({ signal: 'SIGINT' }, 'shutting down'))
  process.on('SIGHUP', () => void running.reloadTls('SIGHUP'))
  if (config.startedByNpm && !opts.worker)
    stopWithParent((parent) => stop({ parent }, 'the npm process that started hostapi ended'))
  return { running, stop }
}

/**
 * npx runs the command under a shell (`sh -c`), and a signal npm passes on ends that shell, not this process: when
 * the parent it started under is gone (this process was handed to another), it stops as on SIGTERM.
 */
function stopWithParent(stop: (parent: number) => void) {
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    stop(parent)
  }, PARENT_CHECK_MS)
  timer.unref()
}

const announcement = (server: RunningServer): Announcement => ({
  url: server.url,
  httpUrl: server.httpUrl,
  adminUrl: server.adminUrl,
  tlsSource: server.tlsSource,
  sandbox: server.ctx.ops.sandbox !== null,
  demoKey: server.demoKey,
  demoSubUserKey: server.demoSubUserKey,
  demoAdminToken: server.demoAdminToken,
})
