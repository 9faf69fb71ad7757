// The hostapi command line (serve, migrate, admin); main.ts starts it.
import pino from 'pino'
import { ConfigError, loadConfig, StartError, type Config } from '../config/config.js'
import { readableLogLine } from '../lib/log-line.js'
import { startServer } from '../server.js'
import { createContext } from '../context.js'
import { migrate, newerMigrations } from '../db/database.js'
import { runAdmin, AdminUsageError } from './admin.js'
import { PRIVATE_UMASK } from '../data-dir.js'
import { ensureLocalRoot, localRootFile } from '../tls.js'

const USAGE = `Usage: hostapi <command>

Commands:
  serve              Start the API server (the default)
  migrate            Apply pending database migrations and exit
  cert               Print the path of the local root that signs the server's certificate (made once if missing)
  admin <...>        Manage accounts, users, API keys, admin tokens and the secret key (hostapi admin help)
`

// On a terminal the log is read by a person: one readable line per entry. Elsewhere (a pipe, a file, a service
// manager) it stays JSON, one object per line, for whatever collects it.
function terminalLog(config: Config) {
  if (!process.stdout.isTTY) return {}
  const write = (line: string) => process.stdout.write(readableLogLine(line))
  return { log: pino({ level: config.logLevel }, { write }) }
}

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE)
    return 0
  }
  // Whatever this process creates (SQLite's -wal and -shm files included) is owner-only.
  process.umask(PRIVATE_UMASK)
  const config = loadConfig()
  if (command === 'serve') {
    const server = await startServer(config, terminalLog(config))
    const log = server.ctx.log
    process.stdout.write(`hostapi listening on ${server.url}\n`)
    if (server.httpUrl) process.stdout.write(`plain HTTP listener on ${server.httpUrl}\n`)
    process.stdout.write(`API docs: ${server.url.replace(/\/api\/v2$/, '')}/docs\n`)
    process.stdout.write(`TLS certificate: ${server.tlsSource}\n`)
    process.stdout.write(
      `Admin API: ${server.adminUrl} (token: npx hostapi admin token create)${server.ctx.ops.sandbox ? ', sandbox mode on' : ''}\n`,
    )
    if (server.demoKey) process.stdout.write(`Demo API key: ${server.demoKey}\n`)
    if (server.demoSubUserKey) process.stdout.write(`Demo sub-user API key (domains only): ${server.demoSubUserKey}\n`)
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      log.info({ signal }, 'shutting down: finishing in-flight requests and jobs')
      server.close().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed')
          process.exit(1)
        },
      )
    }
    process.on('SIGTERM', () => stop('SIGTERM'))
    process.on('SIGINT', () => stop('SIGINT'))
    return -1
  }
  if (command === 'cert') {
    if (config.tls.certFile)
      throw new StartError(
        `The server serves ${config.tls.certFile} (HOSTAPI_TLS_CERT), not a local root's certificate`,
      )
    const root = await ensureLocalRoot(config)
    process.stdout.write(`${localRootFile(config)}\n`)
    if (root.created) process.stderr.write('(generated now: the server certificate will be signed by it)\n')
    return 0
  }
  if (command === 'migrate') {
    const ctx = createContext(config)
    try {
      const { applied, newer } = await migrate(ctx.db, ctx.dbSchema)
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n')
      if (newer.length) process.stdout.write(`${newerMigrations(newer)}: ${newer.join(', ')}\n`)
    } finally {
      await ctx.close()
    }
    return 0
  }
  if (command === 'admin') {
    const ctx = createContext(config)
    try {
      await migrate(ctx.db, ctx.dbSchema)
      return await runAdmin(ctx, rest, process.stdout, process.stderr)
    } finally {
      await ctx.close()
    }
  }
  process.stderr.write(`Unknown command: ${command}\n\n${USAGE}`)
  return 2
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (err) => {
    if (err instanceof ConfigError || err instanceof StartError || err instanceof AdminUsageError) {
      process.stderr.write(`${err.message}\n`)
      process.exit(2)
    }
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(1)
  },
)
