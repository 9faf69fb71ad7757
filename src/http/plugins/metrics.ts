import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import type { Metrics } from '../../ops/metrics.js'
import { routeOf } from '../route-hooks.js'

/** The operation a request is counted under: the route's operationId, else its URL pattern, else `unmatched`. */
export function operationOf(req: FastifyRequest): string {
  const schema = routeOf(req).schema as { operationId?: string } | undefined
  return schema?.operationId ?? routeOf(req).url ?? 'unmatched'
}

/** Counts every answered request with its latency, per operation, method and status. */
export const metricsPlugin = fp(async (app, opts: { metrics: Metrics }) => {
  app.addHook('onResponse', (req, reply, done) => {
    opts.metrics.observe(operationOf(req), req.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
})
