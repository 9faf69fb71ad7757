// `hostapi serve`: starts the server, says where it listens, and runs it until a signal (or the end of the npm
// process that started it) stops it.
import pino, { type Logger } from 'pino'
import type { Config } from '../config/config.js'
import { readableLogLine } from '../lib/log-line.js'
import { startServer, type RunningServer } from '../server.js'

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
      say: (text: string, _facts: Record<string, unknown>) => void process.stdout.write(`${text}\n`),
    }
  }
  // The start's lines are said whatever the log level (through process.stdout, written at once on a pipe or a file).
  const lines = pino({ level: 'info' }, process.stdout)
  return { log: undefined, say: (text: string, facts: Record<string, unknown>) => lines.info(facts, text) }
}

/** Starts the server and serves until SIGTERM or SIGINT; SIGHUP reloads the TLS certificate and key. */
export async function serve(config: Config): Promise<void> {
  const { log: terminalLog, say } = serveOutput(config)
  const server = await startServer(config, terminalLog ? { log: terminalLog } : {})
  const log = server.ctx.log
  let stopping = false
  const stop = (facts: Record<string, unknown>, why: string) => {
    if (stopping) return
    stopping = true
    log.info(facts, `${why}: finishing in-flight requests and jobs`)
    setTimeout(() => {
      log.error({ drainMs: DRAIN_MS }, `shutdown did not finish within ${DRAIN_MS / 1000} s: exiting`)
      process.exit(1)
    }, DRAIN_MS).unref()
    server.close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop({ signal: 'SIGTERM' }, 'shutting down'))
  process.on('SIGINT', () => stop({ signal: 'SIGINT' }, 'shutting down'))
  process.on('SIGHUP', () => void server.reloadTls('SIGHUP'))
  if (config.startedByNpm) stopWithParent((parent) => stop({ parent }, 'the npm process that started hostapi ended'))
  // Said once the signals are handled: a supervisor that acts on these lines finds them handled.
  announce(server, say)
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

/** The start's lines: where it listens, the certificate, the admin API, and demo mode's keys. */
function announce(server: RunningServer, say: (text: string, facts: Record<string, unknown>) => void) {
  say(`hostapi listening on ${server.url}`, { url: server.url })
  if (server.httpUrl) say(`plain HTTP listener on ${server.httpUrl}`, { url: server.httpUrl })
  const docs = `${server.url.replace(/\/api\/v2$/, '')}/docs`
  say(`API docs: ${docs}`, { url: docs })
  say(`TLS certificate: ${server.tlsSource}`, { certificate: server.tlsSource })
  const sandbox = server.ctx.ops.sandbox !== null
  say(`Admin API: ${server.adminUrl} (token: npx hostapi admin token create)${sandbox ? ', sandbox mode on' : ''}`, {
    url: server.adminUrl,
    sandbox,
  })
  if (server.demoKey) say(`Demo API key: ${server.demoKey}`, { key: server.demoKey })
  if (server.demoSubUserKey)
    say(`Demo sub-user API key (domains only): ${server.demoSubUserKey}`, { key: server.demoSubUserKey })
  if (server.demoAdminToken) say(`Demo admin token: ${server.demoAdminToken}`, { token: server.demoAdminToken })
}
