import http from 'node:http'
import type { Logger } from 'pino'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import https from 'node:https'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import pg from 'pg'
import SqliteDatabase from 'better-sqlite3'
import { loadConfig, type Config } from '../../src/config/config.js'
import { startServer, type RunningServer } from '../../src/server.js'
import type { Clock } from '../../src/clock.js'
import type { FastifyPluginAsync } from 'fastify'
import type { Dialect } from '../../src/db/database.js'
import type { MigrationModule } from '../../src/db/migrations/helpers.js'
import type { PermissionMap } from '../../src/modules/iam/permissions.js'
import { hostingTestProcessor } from './fixtures/orders.js'

/**
 * The dialects every database test runs on: SQLite always, PostgreSQL when HOSTAPI_TEST_PG_URL is set. Declare
 * per-dialect suites with forEachDialect, which also reports the PostgreSQL run as skipped when it cannot run.
 */
export const dialects: Dialect[] = ['sqlite', ...(process.env.HOSTAPI_TEST_PG_URL ? (['postgres'] as const) : [])]

/** Why a test that needs these environment variables cannot run here, or false when all are set. */
export function missingEnv(...names: string[]): string | false {
  const missing = names.filter((n) => !process.env[n])
  return missing.length ? `${missing.join(' and ')} not set` : false
}

// node:test counts skipped tests in its summary but not skipped suites: what cannot run here stands as a skipped test.
const skipped = (name: string, reason: string) => it(name, { skip: reason }, () => undefined)

/**
 * Declares the tests of `fn` once for each dialect. Without HOSTAPI_TEST_PG_URL the PostgreSQL run is one skipped
 * test naming the file, so the summary shows it as skipped rather than leaving it out.
 */
export function forEachDialect(fn: (dialect: Dialect) => void): void {
  for (const dialect of dialects) fn(dialect)
  const reason = missingEnv('HOSTAPI_TEST_PG_URL')
  if (reason) skipped(`${path.relative(process.cwd(), process.argv[1] ?? 'tests')} (postgres)`, reason)
}

/** describe(name, fn) when every variable in `env` is set; otherwise a skipped test of that name giving the reason. */
export function describeWithEnv(env: string[], name: string, fn: () => void): void {
  const reason = missingEnv(...env)
  if (reason) skipped(name, reason)
  else describe(name, fn)
}

if (process.env.CI && !process.env.HOSTAPI_TEST_PG_URL) {
  throw new Error('CI must run the suite on PostgreSQL too: set HOSTAPI_TEST_PG_URL')
}

export interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  // biome-ignore lint/suspicious/noExplicitAny: tests read into arbitrary JSON answers, including malformed ones
  body: any
}

export interface RequestOptions {
  key?: string
  body?: unknown
  /** Sent as is, with no Content-Type unless `headers` sets one. */
  rawBody?: string | Buffer
  headers?: Record<string, string>
}

export interface TestAccount {
  accountId: number
  customerNumber: number
  /** The main user, whose key `key` is. */
  userId: number
  isMainUser: true
  permissions: PermissionMap
  key: string
}

export interface TestApp {
  dialect: Dialect
  server: RunningServer
  ctx: RunningServer['ctx']
  config: Config
  /** Base URL of the HTTPS listener, without the API prefix. */
  origin: string
  request(method: string, path: string, opts?: RequestOptions): Promise<Reply>
  /** A new account with its main user and an API key. */
  account(name?: string): Promise<TestAccount>
  /** A sub-user of the account with these permissions (others false) and its key. */
  subUser(account: TestAccount, permissions: PermissionMap): Promise<{ userId: number; key: string }>
  close(): Promise<void>
}

const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false })
let counter = 0

// The migrator inspects every schema of the database and fails ('schema … does not exist') on one dropped meanwhile
// by a test running in parallel: test apps start, and tests migrate (whileSchemasStay), under a shared advisory lock,
// test schemas are dropped under the exclusive one. (Migrations run by separate hostapi processes, see
// processDatabase, are not covered.)
const SCHEMA_LOCK = 72_616_001

/** Runs `fn`, which migrates a database of `dialect`, while no test schema is dropped (on PostgreSQL). */
export function whileSchemasStay<T>(dialect: Dialect, fn: () => Promise<T>): Promise<T> {
  return dialect === 'postgres' ? underSchemaLock('shared', fn) : fn()
}

async function underSchemaLock<T>(mode: 'shared' | 'exclusive', fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.HOSTAPI_TEST_PG_URL })
  await client.connect()
  try {
    await client.query(mode === 'shared' ? 'select pg_advisory_lock_shared($1)' : 'select pg_advisory_lock($1)', [
      SCHEMA_LOCK,
    ])
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Makes a fresh database for one test app: a temporary SQLite file, or a new PostgreSQL schema. */
export async function freshDatabase(
  dialect: Dialect,
  dataDir: string,
): Promise<{ database: Config['database']; drop(): Promise<void> }> {
  if (dialect === 'sqlite')
    return { database: { dialect: 'sqlite', file: path.join(dataDir, 'hostapi.db') }, drop: async () => undefined }
  const url = process.env.HOSTAPI_TEST_PG_URL!
  const schema = `t_${process.pid}_${++counter}_${randomBytes(3).toString('hex')}`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`create schema ${schema}`)
  await client.end()
  return {
    database: { dialect: 'postgres', url, schema },
    drop: () =>
      underSchemaLock('exclusive', async (c) => void (await c.query(`drop schema if exists ${schema} cascade`))),
  }
}

/** The environment that points a separate hostapi process (the CLI, a spawned server) at `database`. */
function databaseEnv(database: Config['database']): Record<string, string> {
  return database.dialect === 'postgres'
    ? { DATABASE_URL: database.url, ...(database.schema ? { HOSTAPI_DB_SCHEMA: database.schema } : {}) }
    : { DATABASE_URL: `sqlite:${database.file}` }
}

/**
 * The secret key of every hostapi started by the tests of this process (in-process apps, the CLI, spawned servers
 * on a ProcessDatabase), so instances on one database agree, as docs/several-instances.md asks of a deployment. A spawned server
 * without it generates its own `secret.key` in its data directory.
 */
export const TEST_SECRET_KEY = randomBytes(32).toString('base64')

/** Reads rows straight from the database (not through hostapi), on either dialect. */
export async function rawRows(database: Config['database'], query: string): Promise<Record<string, unknown>[]> {
  if (database.dialect === 'sqlite') {
    const db = new SqliteDatabase(database.file, { readonly: true })
    try {
      return db.prepare(query).all() as Record<string, unknown>[]
    } finally {
      db.close()
    }
  }
  const c = new pg.Client({ connectionString: database.url })
  await c.connect()
  try {
    if (database.schema) await c.query(`set search_path to ${database.schema}`)
    return (await c.query(query)).rows
  } finally {
    await c.end()
  }
}

/** A data directory for one test, removed by the caller. */
export const tempDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-test-'))

/** A data directory and a fresh database for hostapi processes (the CLI, a spawned server). */
export interface ProcessDatabase {
  database: Config['database']
  /** Points a process at the data directory and the database (PATH included, logs silent). */
  env: Record<string, string>
  /** Drops the database and removes the data directory. */
  remove(): Promise<void>
}

export async function processDatabase(dialect: Dialect): Promise<ProcessDatabase> {
  const dataDir = tempDir()
  const fresh = await freshDatabase(dialect, dataDir)
  return {
    database: fresh.database,
    env: {
      PATH: process.env.PATH ?? '',
      HOSTAPI_DATA_DIR: dataDir,
      HOSTAPI_LOG_LEVEL: 'silent',
      HOSTAPI_SECRET_KEY: TEST_SECRET_KEY,
      ...databaseEnv(fresh.database),
    },
    async remove() {
      await fresh.drop()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Starts the real server over HTTPS on a fresh database of `dialect` (port 0, no demo data, job runner and DNS
 * server off unless `env` turns them on). `env` is read as the process environment would be.
 */
export async function startTestApp(
  dialect: Dialect,
  opts: {
    env?: Record<string, string>
    clock?: Clock
    /** Run as another instance on the database of this app. */
    shareDatabaseWith?: TestApp
    /** Run on this existing database (left in place on close). */
    database?: Config['database']
    /** Route modules mounted under the API prefix besides the app's own. */
    routes?: FastifyPluginAsync[]
    /** The logger instead of a silent one (a test that reads what is logged). */
    log?: Logger
    /** The migrations the instance knows, instead of the release's: an older or a newer release's. */
    migrations?: Record<string, MigrationModule>
  } = {},
): Promise<TestApp> {
  const dataDir = tempDir()
  const existing = opts.database ?? opts.shareDatabaseWith?.config.database
  const fresh = existing ? { database: existing, drop: async () => undefined } : await freshDatabase(dialect, dataDir)
  // Instances on one database share Redis keys; every other test app has its own.
  const redisPrefix =
    opts.shareDatabaseWith?.config.redisPrefix ?? `hostapi-test:${process.pid}:${randomBytes(4).toString('hex')}:`
  const config = loadConfig(
    {
      HOSTAPI_DATA_DIR: dataDir,
      HOSTAPI_PORT: '0',
      HOSTAPI_LOG_LEVEL: 'silent',
      HOSTAPI_DEMO: '0',
      HOSTAPI_JOBS: '0',
      HOSTAPI_SIM_SPEED: '1000000',
      HOSTAPI_DNS_PORT: '0',
      // Tests ask the same names far more often than a resolver would; test/dns-rrl.test.ts turns the limiting on.
      HOSTAPI_DNS_RRL_RESPONSES_PER_SECOND: '0',
      HOSTAPI_REDIS_PREFIX: redisPrefix,
      ...(opts.env?.HOSTAPI_SECRET_KEY_FILE ? {} : { HOSTAPI_SECRET_KEY: TEST_SECRET_KEY }),
      ...opts.env,
    },
    { database: fresh.database },
  )
  const start = () =>
    startServer(config, {
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.routes ? { extraRoutes: opts.routes } : {}),
      ...(opts.log ? { log: opts.log } : {}),
      ...(opts.migrations ? { migrations: opts.migrations } : {}),
      orderProcessors: { hosting: hostingTestProcessor },
    })
  let server: RunningServer
  try {
    server = await whileSchemasStay(dialect, start)
  } catch (err) {
    await fresh.drop()
    fs.rmSync(dataDir, { recursive: true, force: true })
    throw err
  }
  const origin = server.url.replace(/\/api\/v2$/, '')

  const t: TestApp = {
    dialect,
    server,
    ctx: server.ctx,
    config,
    origin,
    request: (method, p, o = {}) => request(origin, method, p, o),
    async account(name = 'Test B.V.') {
      const n = ++counter
      const email = `owner${n}-${randomBytes(3).toString('hex')}@example.com`
      const created = await server.ctx.services.iam.createAccount({
        name,
        email,
        firstname: 'Owner',
        lastname: String(n),
      })
      const { key } = await server.ctx.services.iam.createKey(created.accountId, created.userId, { label: 'test' })
      return { ...created, isMainUser: true as const, permissions: {}, key }
    },
    async subUser(account, permissions) {
      const email = `sub${++counter}-${randomBytes(3).toString('hex')}@example.com`
      const userId = await server.ctx.services.iam.createSubUser(account.accountId, {
        email,
        firstname: 'Sub',
        lastname: 'User',
        permissions,
      })
      const { key } = await server.ctx.services.iam.createKey(account.accountId, userId, { label: 'sub' })
      return { userId, key }
    },
    async close() {
      await server.close()
      await fresh.drop()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
  return t
}

/** One HTTPS request with full control over headers and body; the API prefix is added to relative paths. */
export function request(origin: string, method: string, p: string, o: RequestOptions = {}): Promise<Reply> {
  const url = new URL(/^\/(api\/|docs|admin|sandbox|healthz|readyz|metrics|$)/.test(p) ? p : `/api/v2${p}`, origin)
  const headers: Record<string, string> = { ...o.headers }
  let payload: string | Buffer | undefined
  if (o.rawBody !== undefined) payload = o.rawBody
  else if (o.body !== undefined) {
    payload = JSON.stringify(o.body)
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json'
  }
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload))
  if (o.key !== undefined) headers['api-key'] = o.key
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const buf = Buffer.concat(chunks)
        const text = buf.toString('utf8')
        let body: unknown = text
        if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
          try {
            body = JSON.parse(text)
          } catch {
            body = text
          }
        } else if (String(res.headers['content-type'] ?? '').startsWith('application/pdf')) body = buf
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body })
      })
    })
    req.on('error', reject)
    if (payload !== undefined) req.write(payload)
    req.end()
  })
}

/** One plain-HTTP request; the body parsed when it is JSON. */
export function plainRequest(origin: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    http
      .get(new URL(path, origin), { headers, agent: false }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          text += c
        })
        res.on('end', () => {
          let body: unknown = text
          try {
            body = JSON.parse(text)
          } catch {}
          resolve({ status: res.statusCode ?? 0, body })
        })
      })
      .on('error', reject)
  })
}
