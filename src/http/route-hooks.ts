import type { FastifyInstance, onSendHookHandler } from 'fastify'

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Adds `hook` as the last onSend hook of every mutating route (any method but GET, HEAD and OPTIONS)
 * registered from now on, so reads pay nothing for it. Hooks run in the order their plugins were registered.
 */
export function onSendOfMutatingRoutes(app: FastifyInstance, hook: onSendHookHandler): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (methods.every((m) => READ_METHODS.has(m))) return
    const existing = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : []
    route.onSend = [...existing, hook]
  })
}
