import fp from 'fastify-plugin'
import { setTimeout as sleep } from 'node:timers/promises'
import { errors } from '../../errors.js'
import type { FaultInjector } from '../../ops/faults.js'
import type { Metrics } from '../../ops/metrics.js'
import { API_PREFIX } from '../constants.js'
import { routeOf } from '../route-hooks.js'

/**
 * Sandbox fault injection on the customer API, matched by the route's operationId and, when the fault names them,
 * the path parameters, the account and the key. Registered after authentication and the rate limit, so a fault
 * answers only calls that would otherwise have run. A fault delays, answers a status (a 429 with `Retry-After`), or
 * resets the connection.
 */
export const faultsPlugin = fp(async (app, opts: { faults: FaultInjector; metrics: Metrics }) => {
  app.addHook('onRequest', async (req, reply) => {
    const schema = routeOf(req).schema as { operationId?: string } | undefined
    if (!schema?.operationId || !req.url.startsWith(API_PREFIX)) return
    const fault = opts.faults.draw({
      operation: schema.operationId,
      params: (req.params ?? {}) as Record<string, unknown>,
      customerNumber: req.principal?.customerNumber ?? null,
      keyPrefix: req.principal?.keyPrefix ?? null,
    })
    if (!fault) return
    opts.metrics.faultInjected(schema.operationId)
    if (fault.latency_ms > 0) await sleep(fault.latency_ms)
    if (fault.reset) {
      req.raw.socket.destroy()
      return reply.hijack()
    }
    if (fault.status !== null)
      throw errors.injectedFault(fault.status, fault.status_description ?? undefined, fault.retry_after ?? undefined)
  })
})
