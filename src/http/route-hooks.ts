import type { FastifyInstance, onSendHookHandler } from 'fastify'

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
