import fs from 'node:fs'
import http from 'node:http'
import type { Server as TlsServer } from 'node:tls'
import type { FastifyInstance } from 'fastify'
import { ConfigError, StartError, type Config } from './config/config.js'
import { SecretBoxError } from './lib/secret-box.js'
import { buildAdminApp, buildApp, type AppOptions } from './app.js'
import { ADMIN_PREFIX } from './http/constants.js'
import { clientErrorHandler } from './http/plugins/errors.js'
import { ConnectionCap, guardListener } from './http/connection-guard.js'
import { createContext, type Context, type ContextOptions } from './context.js'
import { migrate, newerMigrations } from './db/migrate.js'
import { demoAdminToken, demoKeyFile, demoSubUserKeyFile, keepDemoKeys, seedDemoIfEmpty } from './seed/demo.js'
import { seedFileIfEmpty } from './seed/seed-file.js'
import { loadTls } from './tls.js'
import { tlsReloader } from './tls-reload.js'
import { hashApiKey } from './modules/iam/keys.js'
import { findKeyForAuth } from './modules/iam/iam.repository.js'
import { postgresInvalidationBus } from './modules/iam/auth-cache-bus.js'
import { armCrashPoints } from './ops/crash-points.js'

/**
 * A worker of `serve --workers N` (src/cluster.ts): the primary has readied the database, the TLS material and the
 * seed before forking it; the `background` worker (one at a time) also runs the built-in DNS server and schedules
 * the recurring jobs. Every worker serves the same ports and runs the job runner.
 */
export interface WorkerRole {
  index: number
  background: boolean
}

/** What a caller may add to the context and the app: a clock, a logger, route modules of its own, a worker's role. */
export type ServerOptions = ContextOptions & Pick<AppOptions, 'extraRoutes'> & { worker?: WorkerRole }

export interface RunningServer {
  ctx: Context
  app: FastifyInstance
  url: string
  httpUrl: string | null
  /** Base URL of the admin API (on its own listener, HOSTAPI_ADMIN_HOST:HOSTAPI_ADMIN_PORT, when the port is set). */
  adminUrl: string
  demoKey: string | null
  /** The key of the demo account's sub-user (domains only), while it is valid. */
  demoSubUserKey: string | null
  /** The admin token of demo mode (kept in the data directory), while it is not revoked. */
  demoAdminToken: string | null
  /** Where the served certificate comes from: the configured file, or the one the local root signed. */
  tlsSource: string
  /**
   * Reads the TLS certificate and key again and serves them on new connections, open ones untouched (SIGHUP; a change
   * of the configured files does the same by itself). False when they do not load: the served pair stays.
   */
  reloadTls(reason: string): Promise<boolean>
  close(): Promise<void>
}

/**
 * Starts hostapi: migrations, demo seed, HTTPS listener (and the optional admin and plain-HTTP ones, all with the
 * same time limits and one per-address connection cap), the DNS server, job runner.
 * `close()` stops accepting, lets in-flight requests and jobs finish, then closes the database.
 */
export async function startServer(config: Config, opts: ServerOptions = {}): Promise<RunningServer> {
  const ctx = createContext(config, opts)
  const background = opts.worker?.background ?? true
  try {
    if (opts.worker) await prepareWorker(ctx)
    else await prepare(ctx)
    const { key: demoKey, subUserKey: demoSubUserKey } = config.demo.enabled
      ? await demoKeysFor(ctx)
      : { key: null, subUserKey: null }
    const adminToken = config.demo.enabled ? await demoAdminToken(ctx) : null
    const tls = await loadTls(config)
    const app = await buildApp(ctx, { https: tls, extraRoutes: opts.extraRoutes })
    // One count of open connections per client address over all the listeners.
    const cap = new ConnectionCap(config.connections.maxPerAddress, config.trustedProxies)
    guardListener(app.server, config.connections, cap)

    // The DNS server first: a DNS port in use stops the start before anything says it listens.
    if (background) await ctx.drivers.dns.start()
    try {
      await explainListen(
        () => app.listen({ host: config.host, port: config.port }),
        config.host,
        config.port,
        'HOSTAPI_PORT',
      )
    } catch (err) {
      await ctx.drivers.dns.stop()
      throw err
    }
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : config.port
    const host = config.host.includes(':') ? `[${config.host}]` : config.host
    const url = `https://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${port}/api/v2`

    let adminApp: FastifyInstance | null = null
    let adminUrl = url.replace(/\/api\/v2$/, ADMIN_PREFIX)
    if (config.admin.port !== null) {
      adminApp = await buildAdminApp(ctx, { https: tls })
      guardListener(adminApp.server, config.connections, cap)
      try {
        adminUrl = await listenAdmin(adminApp, config, config.admin.port)
      } catch (err) {
        await ctx.drivers.dns.stop()
        await app.close()
        throw err
      }
    }
    let listened: Awaited<ReturnType<typeof listenPlain>>
    try {
      listened = await listenPlain(app, config, host, cap)
    } catch (err) {
      await ctx.drivers.dns.stop()
      await adminApp?.close()
      await app.close()
      throw err
    }
    const { plain, httpUrl } = listened

    // Armed once the instance serves, so the seed and the start never hit one.
    if (config.sandbox.enabled) armCrashPoints(config.sandbox.crashAt)
    if (config.jobs.enabled && background) {
      await ctx.maintenance.schedule()
      await ctx.services.zoneDelivery.scheduleResync()
      await ctx.services.certificates.renewal.schedule()
      await ctx.services.webhooks.scans.scheduleScan()
    }
    if (config.jobs.enabled) ctx.jobs.start()

    const tlsServers = [app.server, ...(adminApp ? [adminApp.server] : [])] as unknown as TlsServer[]
    const reloader = tlsReloader(config, tlsServers, ctx.log)

    let closing: Promise<void> | null = null
    const close = () =>
      (closing ??= (async () => {
        reloader.close()
        if (plain) {
          plain.close()
          plain.closeIdleConnections()
        }
        await ctx.drivers.dns.stop()
        await adminApp?.close()
        await app.close()
        await ctx.services.iam.closeInvalidationBus()
        await ctx.close()
      })())
    return {
      ctx,
      app,
      url,
      httpUrl,
      adminUrl,
      demoKey,
      demoSubUserKey,
      demoAdminToken: adminToken,
      tlsSource: tls.source,
      reloadTls: reloader.reload,
      close,
    }
  } catch (err) {
    await ctx.services.iam.closeInvalidationBus().catch(() => undefined)
    await ctx.close().catch(() => undefined)
    throw err
  }
}

/**
 * Readies the database before anything is served: migrations (and the check that a newer release's are compatible
 * with this one), the secret key check, the auth-cache invalidation bus (PostgreSQL), the seed file, Redis, and the
 * fixed admin token.
 */
async function prepare(ctx: Context): Promise<void> {
  const { config } = ctx
  const { newer } = await migrate(ctx.db, ctx.dbSchema, ctx.migrations)
  // An instance of the previous release during a rolling upgrade, or after a rollback of the code.
  if (newer.length) ctx.log.info({ newer }, newerMigrations(newer))
  await verifySecrets(ctx)
  await prepareWorker(ctx)
  // A seed file, when given, describes the data of an empty database (the demo data then stays out).
  await seedFileIfEmpty(ctx)
  if (config.admin.token) await ctx.services.admin.ensureToken(config.admin.token, 'HOSTAPI_ADMIN_TOKEN')
}

/** What every process readies for itself: the auth-cache invalidation bus (PostgreSQL) and Redis. */
async function prepareWorker(ctx: Context): Promise<void> {
  if (ctx.config.database.dialect === 'postgres') {
    const database = ctx.config.database
    await ctx.services.iam.useInvalidationBus((onChange) =>
      postgresInvalidationBus(ctx.db, database, onChange, ctx.log),
    )
  }
  // The first requests count in Redis rather than in memory; an unreachable Redis delays the start by a second at most.
  await ctx.redisGuard?.whenReady(1000)
}

/**
 * What the primary of `serve --workers N` does once before forking: the migrations, the secret key's check, the
 * seed file and demo data, the fixed admin token, the TLS material (generated when missing). Nothing listens.
 */
export async function prepareOnce(config: Config, opts: ContextOptions = {}): Promise<void> {
  const ctx = createContext(config, opts)
  try {
    await prepare(ctx)
    if (config.demo.enabled) {
      await demoKeysFor(ctx)
      await demoAdminToken(ctx)
    }
    await loadTls(config)
  } finally {
    await ctx.services.iam.closeInvalidationBus().catch(() => undefined)
    await ctx.close()
  }
}

/** Starts the admin API on its own address (HOSTAPI_ADMIN_HOST, 127.0.0.1 by default) and port; returns its base URL. */
async function listenAdmin(adminApp: FastifyInstance, config: Config, port: number): Promise<string> {
  const bind = config.admin.host
  await explainListen(
    () => adminApp.listen({ host: bind, port }),
    bind,
    port,
    'HOSTAPI_ADMIN_PORT',
    'HOSTAPI_ADMIN_HOST',
  )
  const a = adminApp.server.address()
  const host = bind.includes(':') ? `[${bind}]` : bind
  const shown = host === '0.0.0.0' || host === '[::]' ? 'localhost' : host
  return `https://${shown}:${typeof a === 'object' && a ? a.port : port}${ADMIN_PREFIX}`
}

/**
 * The plain-HTTP listener, when HOSTAPI_HTTP_PORT is set. It goes through the same app: a trusted proxy that
 * says https is served, anything else gets `400 SSL connection is required`.
 */
async function listenPlain(app: FastifyInstance, config: Config, host: string, cap: ConnectionCap) {
  if (config.httpPort === null) return { plain: null, httpUrl: null }
  const port = config.httpPort
  const plain = http.createServer((req, res) => app.routing(req, res))
  plain.on('clientError', clientErrorHandler)
  guardListener(plain, config.connections, cap)
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      plain.once('error', reject)
      plain.listen(port, config.host, () => resolve())
    })
  await explainListen(listen, config.host, port, 'HOSTAPI_HTTP_PORT')
  const a = plain.address()
  return { plain, httpUrl: `http://${host}:${typeof a === 'object' && a ? a.port : port}` }
}

/**
 * Runs `listen`; a port in use, a port below 1024 without the privilege, or an address not on this machine
 * stops the start with a StartError naming the setting to change.
 */
async function explainListen(
  listen: () => Promise<unknown>,
  bind: string,
  port: number,
  variable: string,
  hostVariable = 'HOSTAPI_HOST',
) {
  try {
    await listen()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const where = `${bind.includes(':') ? `[${bind}]` : bind}:${port}`
    if (code === 'EADDRINUSE')
      throw new StartError(
        `Port ${port} is already in use (${where}): set ${variable} to a free port, or stop what uses it`,
      )
    if (code === 'EACCES')
      throw new StartError(
        `Port ${port} needs privileges this process lacks (${where}): set ${variable} to 1024 or above`,
      )
    if (code === 'EADDRNOTAVAIL')
      throw new StartError(`${bind} is not an address of this machine: set ${hostVariable} to one that is`)
    throw err
  }
}

/**
 * Checks that the secret key opens what the database holds, before anything is served, and seals secrets stored
 * in plaintext by an earlier version. A wrong key stops the start with a ConfigError naming the key's source.
 */
async function verifySecrets(ctx: Context): Promise<void> {
  try {
    const sealed = await ctx.services.secrets.verify()
    if (sealed) ctx.log.info({ sealed }, 'sealed secrets stored in plaintext with the secret key')
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err
    throw new ConfigError([
      `The secret key (${ctx.secrets.source}, key id ${ctx.secrets.box.currentKeyId}) does not open the secrets stored in the database: ${err.message}. ` +
        'Start with the key the database was set up with (HOSTAPI_SECRET_KEY, HOSTAPI_SECRET_KEY_FILE or secret.key in the data directory); ' +
        'every instance on one database needs the same key, and during a rotation the old one in HOSTAPI_SECRET_KEY_PREVIOUS',
    ])
  }
}

/**
 * Seeds the demo account on an empty database and returns its keys. The generated keys are kept in the
 * data directory so a later start can show them again (while they are valid); a fixed HOSTAPI_DEMO_KEY is always shown.
 */
async function demoKeysFor(ctx: Context): Promise<{ key: string | null; subUserKey: string | null }> {
  const seeded = await seedDemoIfEmpty(ctx)
  if (seeded) {
    keepDemoKeys(ctx.config, seeded)
    return { key: seeded.key, subUserKey: seeded.subUserKey }
  }
  const stored = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : null)
  const valid = async (candidate: string | null) => {
    if (!candidate) return null
    const row = await findKeyForAuth(ctx.db, hashApiKey(candidate))
    return row && row.revoked_at === null ? candidate : null
  }
  return {
    key: await valid(ctx.config.demo.key ?? stored(demoKeyFile(ctx.config))),
    subUserKey: await valid(stored(demoSubUserKeyFile(ctx.config))),
  }
}
