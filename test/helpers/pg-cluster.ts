import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from './redis.js'
import { eventually } from './wait.js'
import { owned } from './children.js'

const run = promisify(execFile)
const HAPROXY = '/usr/sbin/haproxy'
/** The HAProxy configuration the deployment example ships, run as it is. */
export const HAPROXY_CONFIG = new URL('../../deploy/haproxy-postgres.cfg', import.meta.url).pathname

/** The newest PostgreSQL server binaries of Debian's packages, or null. */
function pgBin(): string | null {
  const root = '/usr/lib/postgresql'
  if (!fs.existsSync(root)) return null
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b))
  return versions.length ? path.join(root, versions[versions.length - 1], 'bin') : null
}

/** Why a PostgreSQL primary, its standby and HAProxy cannot be started here, or false when they can. */
export function pgClusterMissing(): string | false {
  if (!pgBin()) return 'PostgreSQL server binaries not installed (/usr/lib/postgresql/*/bin)'
  if (!fs.existsSync(HAPROXY)) return 'haproxy not installed'
  return false
}

const asRoot = process.getuid?.() === 0
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/** Runs a PostgreSQL program: as the postgres user when the test runs as root (PostgreSQL refuses to run as root). */
async function pgRun(program: string, args: string[]): Promise<string> {
  const bin = path.join(pgBin()!, program)
  const r = asRoot ? await run('su', ['postgres', '-c', [bin, ...args].map(quote).join(' ')]) : await run(bin, args)
  return r.stdout
}

/** A PostgreSQL server of the cluster, in its own directory on a loopback port. */
export interface PgNode {
  name: string
  port: number
  dir: string
  url(database?: string): string
  /** The postmaster's pid, from its pid file. */
  pid(): number
  log(): string
}

export interface PgCluster {
  primary: PgNode
  standby: PgNode
  /** HAProxy's address: the one to write through. */
  proxyPort: number
  /** Kills the node's postmaster and every process it started (SIGKILL, by pid): a machine that dies at once. */
  kill(node: PgNode): void
  /** Promotes the standby to primary (pg_ctl promote) and resolves once it takes writes. */
  promote(): Promise<void>
  /** Resolves once `node` is the one HAProxy sends new connections to. */
  routedTo(node: PgNode, ms?: number): Promise<void>
  haproxyLog(): string
  close(): Promise<void>
}

/** The pids of the processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) out.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return out
}

/** `select <expr>` on one node, with a short connect timeout; null when it cannot be reached. */
async function ask(url: string, query: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 800 })
  client.on('error', () => undefined)
  try {
    await client.connect()
    const { rows } = await client.query(query)
    return rows[0]?.v ?? null
  } catch {
    return null
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * The health endpoint of one node, as Patroni's REST API has it: `OPTIONS /primary` (or GET) answers 200 when the
 * node takes writes, 503 otherwise (in recovery, or not reachable).
 */
async function checkEndpoint(node: PgNode): Promise<{ port: number; server: http.Server }> {
  const server = http.createServer((req, res) => {
    void ask(node.url(), 'select not pg_is_in_recovery() as v').then((primary) => {
      res.writeHead(req.url === '/primary' && primary === true ? 200 : 503).end()
    })
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return { port, server }
}

/**
 * A PostgreSQL primary with a synchronous streaming standby (a commit is acknowledged once the standby has it on
 * disk) and HAProxy in front of both, routing to the node whose health endpoint says it is the primary
 * (deploy/haproxy-postgres.cfg). Everything in a temporary directory, on free loopback ports.
 */
export async function startPgCluster(): Promise<PgCluster> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-pg-ha-'))
  fs.chmodSync(root, 0o755)
  // The servers write their directories and logs in it.
  if (asRoot) await run('chown', ['postgres', root])
  const node = (name: string, port: number): PgNode => {
    const dir = path.join(root, name)
    return {
      name,
      port,
      dir,
      url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
      pid: () => Number(fs.readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]),
      log: () => {
        try {
          return fs.readFileSync(path.join(root, `${name}.log`), 'utf8')
        } catch {
          return ''
        }
      },
    }
  }
  const primary = node('primary', await freePort())
  const standby = node('standby', await freePort())
  const started: PgNode[] = []
  const checks: http.Server[] = []
  let haproxy: ChildProcess | null = null
  let haproxyOut = ''
  const start = async (n: PgNode, more: string[]) => {
    const opts = [
      '-c listen_addresses=127.0.0.1',
      `-p ${n.port}`,
      `-c unix_socket_directories=${n.dir}`,
      '-c fsync=off',
      '-c max_connections=100',
      '-c wal_level=replica',
      ...more,
    ].join(' ')
    await pgRun('pg_ctl', ['-D', n.dir, '-l', path.join(root, `${n.name}.log`), '-o', opts, '-w', 'start'])
    started.push(n)
  }
  const cluster: PgCluster = {
    primary,
    standby,
    proxyPort: 0,
    kill(n) {
      const pid = n.pid()
      const children = childrenOf(pid)
      process.kill(pid, 'SIGKILL')
      for (const child of children) {
        try {
          process.kill(child, 'SIGKILL')
        } catch {
          // ended with its parent
        }
      }
      started.splice(started.indexOf(n), 1)
    },
    async promote() {
      await pgRun('pg_ctl', ['-D', standby.dir, '-w', 'promote'])
      await eventually(async () => (await ask(standby.url(), 'select not pg_is_in_recovery() as v')) === true, {
        what: 'the promoted standby takes writes',
        timeoutMs: 30_000,
      })
    },
    async routedTo(n, ms = 30_000) {
      await eventually(
        async () =>
          (await ask(
            `postgres://postgres@127.0.0.1:${cluster.proxyPort}/postgres`,
            'select inet_server_port() as v',
          )) === n.port,
        { what: `HAProxy routes to the ${n.name}`, timeoutMs: ms },
      )
    },
    haproxyLog: () => haproxyOut,
    async close() {
      haproxy?.kill('SIGKILL')
      for (const s of checks) s.close()
      for (const n of [...started])
        await pgRun('pg_ctl', ['-D', n.dir, '-m', 'immediate', 'stop']).catch(() => undefined)
      fs.rmSync(root, { recursive: true, force: true })
    },
  }
  try {
    await pgRun('initdb', ['-D', primary.dir, '-A', 'trust', '-U', 'postgres', '--no-sync'])
    // Every commit waits until the standby has it on disk: the primary acknowledges nothing the standby could lose.
    await start(primary, ["-c synchronous_standby_names='*'", '-c synchronous_commit=on'])
    // The standby: a copy of the primary that streams its WAL (-R writes primary_conninfo and standby.signal).
    await pgRun('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      standby.dir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ])
    // Promoted, it has no standby of its own: it must not wait for one (Patroni turns synchronous mode off then too).
    await start(standby, [])
    await eventually(
      async () =>
        (await ask(primary.url(), "select count(*)::int as v from pg_stat_replication where sync_state = 'sync'")) ===
        1,
      { what: 'the standby replicates synchronously', timeoutMs: 30_000 },
    )
    const [c1, c2] = [await checkEndpoint(primary), await checkEndpoint(standby)]
    checks.push(c1.server, c2.server)
    cluster.proxyPort = await freePort()
    haproxy = spawn(HAPROXY, ['-db', '-f', HAPROXY_CONFIG], {
      env: {
        PATH: process.env.PATH ?? '',
        PG_BIND: `127.0.0.1:${cluster.proxyPort}`,
        PG_CHECK_INTERVAL: '300ms',
        PG1_ADDR: `127.0.0.1:${primary.port}`,
        PG1_CHECK_PORT: String(c1.port),
        PG2_ADDR: `127.0.0.1:${standby.port}`,
        PG2_CHECK_PORT: String(c2.port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    owned(haproxy)
    haproxy.stdout!.on('data', (c) => (haproxyOut += c))
    haproxy.stderr!.on('data', (c) => (haproxyOut += c))
    await cluster.routedTo(primary)
    return cluster
  } catch (err) {
    await cluster.close()
    throw new Error(
      `${(err as Error).message}\nprimary: ${primary.log()}\nstandby: ${standby.log()}\nhaproxy: ${haproxyOut}`,
    )
  }
}
