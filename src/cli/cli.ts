// The hostapi command line (serve, migrate, admin); main.ts starts it.
import cluster from 'node:cluster'
import pino from 'pino'
import { ConfigError, environment, loadConfig, StartError, type Config } from '../config/config.js'
import { serve } from './serve.js'
import { readableLogLine } from '../lib/log-line.js'
import { present } from '../lib/invariant.js'
import { createContext } from '../context.js'
import { migrate, newerMigrations } from '../db/migrate.js'
import { runAdmin, AdminUsageError, ADMIN_HELP, isAdminHelp } from './admin.js'
import { runTrigger, TRIGGER_HELP } from './trigger.js'
import { isBackupCommand, runBackupCommand } from './backup.js'
import { PRIVATE_UMASK } from '../data-dir.js'
import { ensureLocalRoot, localRootFile } from '../tls.js'
import { readEnvFile } from '../config/env-file.js'
import { databaseIsSetUp, explainStartFailure } from '../db/start-failures.js'

const USAGE = `Usage: hostapi <command> [--env-file FILE] [--port N] [--host ADDRESS] [--data-dir DIR]

Commands:
  serve              Start the API server (the default)
  migrate            Apply pending database migrations and exit (creates the database when there is none)
  cert               Print the path of the local root that signs the server's certificate (made once if missing)
  admin <...>        Manage accounts, users, API keys, admin tokens and the secret key (hostapi admin help)
  trigger EVENT      Send a webhook event to an account's endpoints, in sandbox mode (hostapi trigger help)

Options (of every command):
  --env-file FILE    Read settings from FILE (NAME=value lines); the environment's own variables win over it
  --port, --host, --data-dir, --workers
                     Take the place of HOSTAPI_PORT, HOSTAPI_HOST, HOSTAPI_DATA_DIR and HOSTAPI_WORKERS (and
                     win over both); --workers N: serve in N processes on the same ports (one per core by default)
`

/** A command line hostapi does not understand: the message and the usage, exit status 2. */
class UsageError extends Error {}

/** The flags every command takes and the variables they stand for. */
const SETTING_FLAGS: Record<string, string> = {
  '--port': 'HOSTAPI_PORT',
  '--host': 'HOSTAPI_HOST',
  '--data-dir': 'HOSTAPI_DATA_DIR',
  '--workers': 'HOSTAPI_WORKERS',
}

/**
 * The command line's options as settings, wherever they stand: `--env-file FILE` (its variables under the
 * environment's own) and the setting flags (over both). Returns the environment to load the configuration from
 * and the arguments left.
 */
function commandLine(argv: string[]): { env: Record<string, string | undefined>; args: string[] } {
  const args: string[] = []
  let fileEnv: Record<string, string | undefined> = {}
  const flags: Record<string, string> = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = present(argv[i], `argument ${i}`)
    const [flag, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined]
    const setting = Object.hasOwn(SETTING_FLAGS, flag) ? SETTING_FLAGS[flag] : undefined
    if (flag !== '--env-file' && setting === undefined) {
      args.push(arg)
      continue
    }
    const value = inline ?? argv[++i]
    if (value === undefined || value === '') throw new UsageError(`${flag} needs a value\n\n${USAGE}`)
    if (flag === '--env-file') fileEnv = { ...fileEnv, ...readEnvFile(value) }
    else if (setting !== undefined) flags[setting] = value
  }
  return { env: environment(fileEnv, flags), args }
}

async function main(argv: string[]): Promise<number> {
  const { env, args } = commandLine(argv)
  const [command = 'serve', ...rest] = args
  failures.json = command === 'serve' && !process.stderr.isTTY
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE)
    return 0
  }
  // Help reads no configuration and writes no file.
  if (command === 'admin' && isAdminHelp(rest)) {
    process.stdout.write(ADMIN_HELP)
    return 0
  }
  if (command === 'trigger' && (rest.length === 0 || rest[0] === 'help' || rest[0] === '--help')) {
    process.stdout.write(TRIGGER_HELP)
    return 0
  }
  if (command === 'serve' && rest.length > 0) throw new UsageError(`Unknown option for serve: ${rest[0]}\n\n${USAGE}`)
  // Whatever this process creates (SQLite's -wal and -shm files included) is owner-only.
  process.umask(PRIVATE_UMASK)
  const config = loadConfig(env)
  failures.debug = config.logLevel === 'debug' || config.logLevel === 'trace'
  // A worker of `serve --workers N` runs this too: its primary has said the warnings.
  if (!cluster.isWorker)
    for (const warning of config.warnings)
      if (failures.json) stderrLine('warn', {}, warning)
      else process.stderr.write(`Warning: ${warning}\n`)
  try {
    return await run(config, command, rest)
  } catch (err) {
    const line = explainStartFailure(err, config)
    throw line ? new StartError(line) : err
  }
}

/**
 * The log of a command other than serve (migrate, admin): on stderr, so that stdout carries the result alone (the
 * key `key create` prints); readable lines on a terminal, JSON elsewhere.
 */
function commandLog(config: Config) {
  if (!process.stderr.isTTY) return pino({ level: config.logLevel }, stderrDestination())
  return pino({ level: config.logLevel }, { write: (line: string) => process.stderr.write(readableLogLine(line)) })
}

/** Runs a command on a loaded configuration. */
async function run(config: Config, command: string, rest: string[]): Promise<number> {
  if (command === 'serve') {
    await serve(config)
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
    const ctx = createContext(config, { log: commandLog(config) })
    try {
      const { applied, newer } = await migrate(ctx.db, ctx.dbSchema)
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n')
      if (newer.length) process.stdout.write(`${newerMigrations(newer)}: ${newer.join(', ')}\n`)
    } finally {
      await ctx.close()
    }
    return 0
  }
  // A backup copies the database as it is; a restore makes it: neither migrates the configured database first.
  if (command === 'admin' && isBackupCommand(rest))
    return await runBackupCommand(config, rest, process.stdout, process.stderr)
  if (command === 'admin' || command === 'trigger') {
    // An admin command works on the database of a server: it never creates one (from a folder where none is).
    if (!(await databaseIsSetUp(config.database)))
      throw new StartError(
        `No hostapi database at ${config.database.dialect === 'sqlite' ? config.database.file : 'DATABASE_URL'}: ` +
          'run the command where the server runs, or set HOSTAPI_DATA_DIR or DATABASE_URL to its database (hostapi migrate creates one)',
      )
    const ctx = createContext(config, { log: commandLog(config) })
    try {
      await migrate(ctx.db, ctx.dbSchema)
      const runCommand = command === 'admin' ? runAdmin : runTrigger
      return await runCommand(ctx, rest, process.stdout, process.stderr)
    } finally {
      await ctx.close()
    }
  }
  process.stderr.write(`Unknown command: ${command}\n\n${USAGE}`)
  return 2
}

/**
 * How a failure is told: as text, or, for `serve` with stderr not a terminal (a service manager, a pipe), as one JSON
 * object on stderr like the log's lines, an unexpected error's stack only at log level debug.
 */
const failures = { json: false, debug: false }

/** A line of the JSON log on stderr (pino's shape), for what `serve` says before its log exists. */
const stderrLine = (level: 'warn' | 'fatal', facts: Record<string, unknown>, msg: string) =>
  pino({ level: 'trace' }, stderrDestination())[level](facts, msg)

/**
 * pino's synchronous destination on stderr. A write that fails there (the pipe's reader is gone) is an 'error' event
 * thrown from the log call itself when no one listens: the line is lost instead, since stderr is where it would be
 * said, and the command's output and exit status still tell what happened.
 */
function stderrDestination() {
  const dest = pino.destination({ dest: 2, sync: true })
  dest.on('error', () => undefined)
  return dest
}

function fail(err: unknown, code: number, facts: Record<string, unknown> = {}): never {
  const message = err instanceof Error ? err.message : String(err)
  if (failures.json) stderrLine('fatal', failures.debug && code === 1 ? { ...facts, err } : facts, message)
  else process.stderr.write(`${code === 1 && err instanceof Error ? (err.stack ?? message) : message}\n`)
  process.exit(code)
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (err) => {
    if (err instanceof ConfigError) fail(err, 2, { problems: err.problems })
    if (err instanceof StartError || err instanceof AdminUsageError || err instanceof UsageError) fail(err, 2)
    fail(err, 1)
  },
)
