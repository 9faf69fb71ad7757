import type { Server as TlsServer } from 'node:tls'
import Fastify, { LogController, type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from 'fastify'
import type { Context, Services } from './context.js'
import { requestId, transportPlugin } from './http/plugins/transport.js'
import { clientErrorHandler, errorsPlugin, frameworkErrors } from './http/plugins/errors.js'
import { authPlugin } from './http/plugins/auth.js'
import { perKeyBudget, rateLimitPlugin } from './http/plugins/rate-limit.js'
import { auditPlugin } from './http/plugins/audit.js'
import { idempotencyPlugin } from './http/plugins/idempotency.js'
import { durabilityPlugin } from './http/plugins/durability.js'
import { ResponseCache, responseCachePlugin } from './http/plugins/response-cache.js'
import { answerCachedReadsEarly } from './http/early-answers.js'
import { openapiPlugin } from './http/plugins/openapi.js'
import { apiRoutes } from './http/routes.js'
import { ADMIN_PREFIX, API_PREFIX, MAX_PARAM_LENGTH } from './http/constants.js'
import { requestLogPlugin } from './http/plugins/request-log.js'
import { metricsPlugin } from './http/plugins/metrics.js'
import { faultsPlugin } from './http/plugins/faults.js'
import { journalPlugin } from './http/plugins/journal.js'
import { adminApi, adminListenerMetrics, healthRoutes } from './http/admin-api.js'
import { inspectorRoutes } from './http/inspector.js'
import type { RouteEntry } from './http/route-table.js'
import { lazySchemaCompilers, type CompileAll } from './http/schema-compilers.js'
import { asArray, decorateRouteInfo } from './http/route-hooks.js'
import { AuthThrottle } from './http/auth-throttle.js'
import { declareErrorResponses } from './http/error-responses.js'
import { ErrorBody, Pagination } from './http/schemas.js'
import { answerPlainHttpOnTls } from './http/plain-on-tls.js'
import { requestLogger } from './http/request-logger.js'
import type { JsonLimits } from './lib/json-body.js'

declare module 'fastify' {
  interface FastifyInstance {
    ctx: Context
    services: Services
    /** Every route registered, with what it declares. */
    routeTable: RouteEntry[]
    /** Compiles every route's validators and serializers now (they compile on first use otherwise). */
    compileSchemas: CompileAll
  }
}

export interface AppOptions {
  /** TLS material; without it the app serves plain HTTP and answers `SSL connection is required`. */
  https?: { key: string | Buffer; cert: string | Buffer } | null
  /** More API route modules, mounted under the API prefix after the built-in ones (test fixtures). */
  extraRoutes?: FastifyPluginAsync[]
}

function newFastify(ctx: Context, opts: AppOptions): FastifyInstance {
  const { config } = ctx
  const schemas = lazySchemaCompilers()
  const app = Fastify({
    ...(opts.https ? { https: { key: opts.https.key, cert: opts.https.cert } } : {}),
    loggerInstance: ctx.log,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLogger,
    genReqId: (req) => requestId(req.headers['x-request-id']),
    trustProxy: config.trustedProxies.length ? config.trustedProxies : false,
    bodyLimit: config.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: MAX_PARAM_LENGTH },
    // Answers Fastify and Node would write in their own shape go out in the envelope instead.
    frameworkErrors,
    clientErrorHandler,
    // The transport plugin answers requests during shutdown with 503 in the envelope.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    schemaController: { compilersFactory: schemas.compilersFactory },
  }) as unknown as FastifyInstance
  if (opts.https) {
    // Plain HTTP sent to the HTTPS port is answered `SSL connection is required` rather than dropped by TLS; a
    // connection that does not finish its TLS handshake in time is dropped.
    const plainHttp = answerPlainHttpOnTls(app.server as unknown as TlsServer, config.connections.tlsHandshakeTimeoutMs)
    app.addHook('preClose', async () => plainHttp.closePending())
  }
  app.decorate('ctx', ctx)
  app.decorate('services', ctx.services)
  app.decorate('routeTable', [] as RouteEntry[])
  app.decorate('compileSchemas', schemas.compileAll)
  decorateRouteInfo(app)
  // The error answers of both APIs refer to ErrorBody; both OpenAPI documents list these as components.
  app.addSchema(ErrorBody)
  app.addSchema(Pagination)
  declareErrorResponses(app)
  return app
}

/**
 * Builds the application; never listens and never reads the environment. The admin API is mounted at
 * `/admin/v1` unless it has its own listener (see buildAdminApp).
 */
export async function buildApp(ctx: Context, opts: AppOptions = {}): Promise<FastifyInstance> {
  const { config } = ctx
  const app = newFastify(ctx, opts)
  const sandbox = ctx.ops.sandbox
  app.addHook('onRoute', (route) => {
    for (const method of asArray(route.method)) {
      if (method === 'HEAD' && route.url.startsWith(API_PREFIX)) continue
      app.routeTable.push({
        method,
        url: route.url,
        operationId: (route.schema as { operationId?: string } | undefined)?.operationId,
        area: route.config?.area,
        fixture: route.config?.fixture,
        idempotent: route.config?.idempotent === true,
        cache: Boolean(route.config?.cache),
        schema: route.schema as RouteEntry['schema'],
      })
    }
    const operationId = (route.schema as { operationId?: string } | undefined)?.operationId
    if (operationId && route.url.startsWith(API_PREFIX)) ctx.ops.operations.add(operationId)
  })

  // Bodies over the general limit (only a zone import takes them) are parsed in the zone worker pool, counted
  // against the caller's account like the zone work itself.
  const zoneWork = ctx.services.dns.work
  const parseLarge = {
    largeBody: config.bodyLimit,
    parse: (req: FastifyRequest, text: string, limits: JsonLimits) =>
      zoneWork.json(req.principal?.accountId ?? 0, text, limits),
  }
  await app.register(transportPlugin, {
    bodyLimit: config.bodyLimit,
    jsonMaxDepth: config.jsonMaxDepth,
    jsonMaxValues: config.jsonMaxValues,
    parseLarge,
  })
  await app.register(errorsPlugin)
  await app.register(metricsPlugin, { metrics: ctx.ops.metrics })
  if (config.requestLog) await app.register(requestLogPlugin)
  if (sandbox) await app.register(journalPlugin, { journal: sandbox.journal, clock: ctx.clock })
  const throttle = new AuthThrottle(ctx.counter, config.authFailures)
  await app.register(authPlugin, { iam: ctx.services.iam, throttle })
  const perKey = perKeyBudget(ctx.counter, config.rateLimit.perKeyPerMinute)
  await app.register(rateLimitPlugin, { perKey, counter: ctx.counter })
  if (sandbox) await app.register(faultsPlugin, { faults: sandbox.faults, metrics: ctx.ops.metrics })
  await app.register(auditPlugin, { db: ctx.db, clock: ctx.clock })
  await app.register(idempotencyPlugin, { service: ctx.services.idempotency })
  await app.register(durabilityPlugin, { durable: ctx.durable })
  const cache = new ResponseCache(config.responseCacheMb * 1024 * 1024)
  await app.register(responseCachePlugin, {
    dataVersion: ctx.dataVersion,
    accountVersion: ctx.accountVersion,
    cache,
  })
  await app.register(openapiPlugin)
  for (const routes of [...apiRoutes, ...(opts.extraRoutes ?? [])]) await app.register(routes, { prefix: API_PREFIX })
  await app.register(healthRoutes)
  if (config.admin.port === null) {
    await app.register(adminApi, { prefix: ADMIN_PREFIX })
    // The inspector lives with the admin API whose token opens it (docs/inspector.md).
    if (sandbox) await app.register(inspectorRoutes)
  }
  // Not with the journal and faults of sandbox mode, nor when the caller's address and scheme come from a proxy's
  // headers (early-answers.ts), nor without a response cache to answer from.
  if (!sandbox && config.trustedProxies.length === 0 && config.responseCacheMb > 0) {
    answerCachedReadsEarly(app, {
      cache,
      iam: ctx.services.iam,
      throttle,
      perKey,
      metrics: ctx.ops.metrics,
      dataVersion: ctx.dataVersion,
      accountVersion: ctx.accountVersion,
      requestLog: config.requestLog,
    })
  }
  await app.ready()
  return app
}

/**
 * The admin API alone, for its own listener (HOSTAPI_ADMIN_HOST:HOSTAPI_ADMIN_PORT), with `/metrics` and the health
 * checks: same transport rules, envelope and errors.
 */
export async function buildAdminApp(ctx: Context, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = newFastify(ctx, opts)
  await app.register(transportPlugin, {
    bodyLimit: ctx.config.bodyLimit,
    jsonMaxDepth: ctx.config.jsonMaxDepth,
    jsonMaxValues: ctx.config.jsonMaxValues,
  })
  await app.register(errorsPlugin)
  await app.register(metricsPlugin, { metrics: ctx.ops.metrics })
  if (ctx.config.requestLog) await app.register(requestLogPlugin)
  await app.register(auditPlugin, { db: ctx.db, clock: ctx.clock })
  await app.register(durabilityPlugin, { durable: ctx.durable })
  await app.register(healthRoutes)
  await app.register(adminListenerMetrics)
  await app.register(adminApi, { prefix: ADMIN_PREFIX })
  if (ctx.ops.sandbox) await app.register(inspectorRoutes)
  await app.ready()
  return app
}
