import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import SqliteDatabase from 'better-sqlite3'
import { freePort, queryUdp } from './dns.js'
import { eventually, stopOrKill } from './wait.js'
import { owned } from './children.js'

const PDNS_SERVER = '/usr/sbin/pdns_server'
const SCHEMAS = [
  '/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql',
  '/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql',
]

/** Why a real PowerDNS cannot be started here, or false when it can. */
export function powerDnsMissing(): string | false {
  if (!fs.existsSync(PDNS_SERVER)) return 'pdns_server not installed'
  if (!SCHEMAS.some((f) => fs.existsSync(f))) return 'pdns-backend-sqlite3 not installed'
  return false
}

/** describe(name, fn) when pdns_server can run; otherwise a skipped test of that name giving the reason. */
export function describeWithPowerDns(name: string, fn: () => void): void {
  const reason = powerDnsMissing()
  // node:test counts skipped tests in its summary but not skipped suites.
  if (reason) it(name, { skip: reason }, () => undefined)
  else describe(name, fn)
}

/** A pdns_server of a test, on loopback, with a fresh gsqlite3 database in a temporary directory. */
export interface PowerDns {
  /** The API base URL (the driver adds `/api/v1`). */
  url: string
  apiKey: string
  /** The DNS port (UDP and TCP) on 127.0.0.1. */
  dnsPort: number
  /** Calls the API directly (as an operator would), `path` below `/api/v1/servers/localhost`. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>
  /** Stops the process (an outage); the database and ports are kept for `start()`. */
  stop(): Promise<void>
  /** Starts the process again on the same ports and database. */
  start(): Promise<void>
  /** Stops the process and removes its directory. */
  close(): Promise<void>
}

/** Starts a pdns_server (gsqlite3 backend, API on, caches as shipped) and resolves once it answers API and DNS. */
export async function startPowerDns(): Promise<PowerDns> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-pdns-'))
  const schema = fs.readFileSync(SCHEMAS.find((f) => fs.existsSync(f))!, 'utf8')
  const db = new SqliteDatabase(path.join(dir, 'pdns.sqlite3'))
  db.exec(schema)
  db.close()
  const apiKey = randomBytes(16).toString('hex')
  const dnsPort = await freePort()
  let apiPort = await freePort()
  while (apiPort === dnsPort) apiPort = await freePort()
  fs.writeFileSync(
    path.join(dir, 'pdns.conf'),
    [
      'launch=gsqlite3',
      `gsqlite3-database=${path.join(dir, 'pdns.sqlite3')}`,
      // The DNSSEC tables are in the schema; the backend uses them only when told to.
      'gsqlite3-dnssec=yes',
      'api=yes',
      `api-key=${apiKey}`,
      'webserver=yes',
      'webserver-address=127.0.0.1',
      `webserver-port=${apiPort}`,
      'webserver-allow-from=127.0.0.0/8',
      'local-address=127.0.0.1',
      `local-port=${dnsPort}`,
      `socket-dir=${dir}`,
      'guardian=no',
      'daemon=no',
      'disable-syslog=yes',
      'security-poll-suffix=',
      'receiver-threads=1',
      'distributor-threads=1',
      'loglevel=4',
      '',
    ].join('\n'),
  )
  const url = `http://127.0.0.1:${apiPort}`
  let child: ChildProcess | null = null
  let output = ''

  const api: PowerDns['api'] = async (method, p, body) => {
    const res = await fetch(`${url}/api/v1/servers/localhost${p}`, {
      method,
      headers: { 'X-API-Key': apiKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {
      // Some errors are plain text.
    }
    return { status: res.status, body: parsed }
  }

  const stop = async () => {
    const c = child
    child = null
    if (!c || c.exitCode !== null || c.signalCode !== null) return
    await stopOrKill(c, new Promise((r) => c.once('exit', r)), 5000)
  }

  const start = async () => {
    if (child) return
    output = ''
    const c = owned(spawn(PDNS_SERVER, [`--config-dir=${dir}`], { stdio: ['ignore', 'pipe', 'pipe'] }))
    child = c
    c.stdout!.on('data', (d) => (output += d))
    c.stderr!.on('data', (d) => (output += d))
    await eventually(
      async () =>
        (await api('GET', '')).status === 200 &&
        (await queryUdp(dnsPort, 'ready.invalid', 'SOA', { timeoutMs: 200 })) !== undefined,
      {
        what: 'pdns_server answers on its API and on DNS',
        timeoutMs: 15_000,
        failIf: () => c.exitCode !== null && `pdns_server exited (${c.exitCode})`,
      },
    ).catch(async (err: Error) => {
      await stop()
      throw new Error(`${err.message}:\n${output}`)
    })
  }

  await start()
  return {
    url,
    apiKey,
    dnsPort,
    api,
    stop,
    start,
    async close() {
      await stop()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}
