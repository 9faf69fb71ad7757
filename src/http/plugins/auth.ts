import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { errors } from '../../errors.js'
import { IamService, type Principal } from '../../modules/iam/iam.service.js'
import { callerIp, presentedKey } from '../caller.js'
import { API_PREFIX } from '../constants.js'
import type { AuthThrottle } from '../auth-throttle.js'
import { routeOf } from '../route-hooks.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set on every route whose area is not `public`. */
    principal: Principal | null
    /**
     * The authenticated caller of a route whose area is not `public` (what its handler reads): authentication ran
     * before the handler, so it is always there; reading it where no key was checked answers 401.
     */
    readonly caller: Principal
    /** The account's data version when the key lookup of this request read it from the database, else null. */
    accountVersion: string | null
  }
}

/**
 * Authentication (onRequest, before the rate limit, behind the failed-credential throttle) and the permission
 * check (preParsing, after it), both driven by the area each route declares. A route of the API without an area fails at start.
 */
export const authPlugin = fp(async (app, opts: { iam: IamService; throttle: AuthThrottle }) => {
  app.decorateRequest('principal', null)
  app.decorateRequest('accountVersion', null)
  app.decorateRequest('caller', {
    getter(this: { principal: Principal | null }) {
      if (!this.principal) throw errors.noValidApiKey()
      return this.principal
    },
  })

  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(API_PREFIX) && route.config?.area === undefined) {
      throw new Error(`Route ${route.method} ${route.url} declares no permission area`)
    }
  })

  app.addHook('onRequest', (req, _reply, done) => {
    const area = routeOf(req).config?.area
    if (!routeOf(req).url || area === undefined || area === 'public') return done()
    const key = presentedKey(req)
    const ip = callerIp(req)
    // A key the cache holds, from an address known not to be throttled, is let in without waiting for anything.
    const cached = key && opts.throttle.admitsNow(ip) === true ? opts.iam.cachedPrincipal(key, ip) : null
    if (cached) {
      req.principal = cached
      return done()
    }
    const seen = (version: string) => {
      req.accountVersion = version
    }
    opts.throttle
      .guard(ip, !!key, () => opts.iam.authenticate(key, ip, seen))
      .then((principal) => {
        req.principal = principal
        done()
      }, done)
  })

  app.addHook('preParsing', (req, _reply, payload, done) => {
    if (!permitted(req)) {
      done(routeOf(req).config?.area === 'vps' ? errors.noAccessToVps() : errors.accessDenied())
      return
    }
    done(null, payload)
  })
})

/** False when the authenticated caller may not use the route's area (answered 403 before the body is read). */
export function permitted(req: FastifyRequest): boolean {
  const area = routeOf(req).config?.area
  const who = req.principal
  return !who || !area || area === 'any' || area === 'public' || IamService.allows(who, area)
}
