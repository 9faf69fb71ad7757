import fp from 'fastify-plugin'
import type { AdminService } from '../../modules/admin/admin.service.js'
import { ADMIN_PREFIX } from '../constants.js'
import type { AuthThrottle } from '../auth-throttle.js'
import { bearerToken, callerIp } from '../caller.js'
import { routeOf } from '../route-hooks.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An admin route: `true` needs an admin token (`Authorization: Bearer`), `public` needs none. Every admin route declares it. */
    admin?: true | 'public'
  }
  interface FastifyRequest {
    /** The admin token that opened this admin request. */
    adminToken: { id: number; prefix: string } | null
  }
}

/**
 * Admin authentication, for the routes under the admin prefix only: a customer API key never opens them
 * (and the customer authentication never accepts an admin token). Wrong tokens count in the failed-credential throttle. An admin route without `config.admin` fails at start.
 */
export const adminAuthPlugin = fp(async (app, opts: { admin: AdminService; throttle: AuthThrottle }) => {
  app.decorateRequest('adminToken', null)

  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(ADMIN_PREFIX) && route.config?.admin === undefined) {
      throw new Error(`Admin route ${route.method} ${route.url} declares no config.admin`)
    }
  })

  app.addHook('onRequest', async (req) => {
    if (routeOf(req).config?.admin !== true) return
    const token = bearerToken(req.headers.authorization)
    req.adminToken = await opts.throttle.guard(callerIp(req), !!token, () => opts.admin.authenticate(token))
  })
})
