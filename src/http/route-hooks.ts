import type { FastifyInstance, FastifyRequest, onSendHookHandler } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    /** What `routeOf` read once for this request. */
    routeInfo: FastifyRequest['routeOptions'] | null
  }
}

/** The methods that never change anything. */
export const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** A route option Fastify takes as one value or an array (methods, hooks), as an array. */
export const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value]

/**
 * Adds `hook` as the last onSend hook of every mutating route (any method but GET, HEAD and OPTIONS)
 * registered from now on, so reads pay nothing for it. Hooks run in the order their plugins were registered.
 */
export function onSendOfMutatingRoutes(app: FastifyInstance, hook: onSendHookHandler): void {
  app.addHook('onRoute', (route) => {
    if (asArray(route.method).every((m) => READ_METHODS.has(m))) return
    route.onSend = [...asArray(route.onSend), hook]
  })
}

/**
 * The options of the route a request matched (its config, schema and URL pattern), read once per request: Fastify's
 * `req.routeOptions` builds a new object at every read, and the hooks of one request read it half a dozen times.
 * Every reader in src/ goes through here (`test/layers.test.ts` checks); the app decorates the request with
 * `routeInfo` (`decorateRouteInfo`).
 */
export function routeOf(req: FastifyRequest): FastifyRequest['routeOptions'] {
  req.routeInfo ??= req.routeOptions
  return req.routeInfo
}

/** Gives the app's requests the `routeInfo` field routeOf fills, in the shape Fastify expects of decorations. */
export function decorateRouteInfo(app: FastifyInstance): void {
  app.decorateRequest('routeInfo', null)
}
