import fp from 'fastify-plugin'
import type { Logger } from 'pino'
import { operationOf } from './metrics.js'
import { routeOf } from '../route-hooks.js'

/** What the log line of one answered request says. */
export interface AnsweredRequest {
  id: string
  method: string
  url: string
  status: number
  /** Milliseconds from the request's arrival to its answer. */
  elapsed: number
  /** The operation id (or URL pattern) of the route that answered; null when no route matched. */
  operation: string | null
}

/**
 * One log line per answered request: method, path (without the query), status, milliseconds and the operation id,
 * under `request` (a terminal shows the message, JSON keeps both). The query stays out: it may carry names a log
 * should not keep. Callers build `r` only when `log.isLevelEnabled('info')`.
 */
export function logRequest(log: Logger, r: AnsweredRequest): void {
  const path = r.url.split('?', 1)[0] ?? r.url
  const ms = Math.round(r.elapsed * 10) / 10
  const line = { id: r.id, method: r.method, path, status: r.status, ms, operation: r.operation }
  log.info({ request: line }, `${r.method} ${path} ${r.status} ${ms}ms${r.operation ? ` ${r.operation}` : ''}`)
}

/** Logs every request Fastify answers (logRequest). */
export const requestLogPlugin = fp(async (app) => {
  app.addHook('onResponse', (req, reply, done) => {
    done()
    if (!app.ctx.log.isLevelEnabled('info')) return
    logRequest(app.ctx.log, {
      id: String(req.id),
      method: req.method,
      url: req.url,
      status: reply.statusCode,
      elapsed: reply.elapsedTime,
      operation: routeOf(req).url ? operationOf(req) : null,
    })
  })
})
