import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { ping } from '../db/database.js'
import { pendingMigrations } from '../db/migrate.js'
import { adminAuthPlugin } from './plugins/admin-auth.js'
import { adminRoutes } from '../modules/admin/admin.routes.js'
import { sandboxRoutes } from '../modules/admin/sandbox.routes.js'
import { operatorRoutes } from '../modules/admin/operator.routes.js'
import { Health } from '../modules/admin/admin.schemas.js'
import { webhooksAdminRoutes, webhooksSandboxRoutes } from '../modules/webhooks/webhooks-admin.routes.js'
import { adminOpenapiPlugin } from './plugins/openapi.js'
import { ordersAdminRoutes } from '../modules/orders/orders-admin.routes.js'
import { adminInspectRoutes } from '../modules/admin/inspect.routes.js'
import { AuthThrottle } from './auth-throttle.js'

/**
 * The admin API, mounted at the admin prefix: admin-token authentication, the operator's routes, the
 * sandbox controls in sandbox mode, and its own OpenAPI document (its routes are hidden from the customer one).
 */
export const adminApi: FastifyPluginAsync = async (app) => {
  await app.register(adminAuthPlugin, {
    admin: app.services.admin,
    throttle: new AuthThrottle(app.ctx.counter, app.ctx.config.authFailures),
  })
  await app.register(adminOpenapiPlugin)
  for (const routes of [...adminRoutes, ...operatorRoutes, webhooksAdminRoutes, ordersAdminRoutes, adminInspectRoutes])
    await app.register(routes)
  if (app.ctx.ops.sandbox) for (const routes of [...sandboxRoutes, webhooksSandboxRoutes]) await app.register(routes)
}

/**
 * `/metrics` at the root of the admin listener (HOSTAPI_ADMIN_PORT), where a Prometheus scrape config expects it: the
 * same text as `/admin/v1/metrics`, behind the same admin token (`Authorization: Bearer adm_…`).
 */
export const adminListenerMetrics: FastifyPluginAsync = async (app) => {
  await app.register(adminAuthPlugin, {
    admin: app.services.admin,
    throttle: new AuthThrottle(app.ctx.counter, app.ctx.config.authFailures),
  })
  app.get('/metrics', { config: { admin: true }, schema: { hide: true } }, async (_req, reply) => {
    const metrics = app.ctx.ops.metrics
    return reply.type(metrics.contentType).send(await metrics.text())
  })
}

/**
 * `/healthz` (the process answers) and `/readyz` (the database answers and every migration is applied), without a key.
 * With Redis configured `/readyz` also says `redis: ok|degraded`; degraded (Redis unreachable, or its breaker open after failed or slow commands) stays
 * 200 with `degraded: ["redis"]`, since the instance serves on with per-instance limits.
 */
export const healthRoutes: FastifyPluginAsync = async (app) => {
  const ctx = app.ctx
  // Answered on every listener, the plain-HTTP one included: a load balancer checks the port it sends traffic to.
  const config = { rateLimit: false, plainHttp: true } as const
  app.get(
    '/healthz',
    {
      config,
      schema: {
        hide: true,
        response: { 200: Type.Object({ status: Type.Integer(), status_description: Type.String() }) },
      },
    },
    async () => ({ status: 200, status_description: 'OK' }),
  )
  app.get(
    '/readyz',
    { config, schema: { hide: true, response: { 200: Health, 503: Health } } },
    async (_req, reply) => {
      let database = 'ok'
      let migrations = 'ok'
      try {
        await ping(ctx.db)
        if ((await pendingMigrations(ctx.db, ctx.dbSchema, ctx.migrations)).length > 0) migrations = 'pending'
      } catch {
        database = 'unreachable'
        migrations = 'unknown'
      }
      const ready = database === 'ok' && migrations === 'ok'
      // Without Redis the instance still serves, with rate limits and failed-credential counts of its own: degraded, not down.
      const redis = ctx.redisGuard ? await ctx.redisGuard.health() : undefined
      return reply.code(ready ? 200 : 503).send({
        status: ready ? 200 : 503,
        status_description: ready ? 'Ready' : 'Not ready',
        ...(redis === 'degraded' ? { degraded: ['redis'] } : {}),
        data: { database, migrations, ...(redis ? { redis } : {}) },
      })
    },
  )
}
