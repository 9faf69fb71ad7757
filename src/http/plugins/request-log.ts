import fp from 'fastify-plugin'
import { operationOf } from './metrics.js'
import { routeOf } from '../route-hooks.js'

/**
 * One log line per answered request: method, path (without the query), status, milliseconds and the operation id,
 * under `request` (a terminal shows the message, JSON keeps both). The query stays out: it may carry names a log
 * should not keep.
 */
export const requestLogPlugin = fp(async (app) => {
  app.addHook('onResponse', (req, reply, done) => {
    done()
    // The line is not built when the log level leaves it out.
    if (!app.ctx.log.isLevelEnabled('info')) return
    const path = req.url.split('?', 1)[0] ?? req.url
    const ms = Math.round(reply.elapsedTime * 10) / 10
    const operation = routeOf(req).url ? operationOf(req) : null
    const line = { id: String(req.id), method: req.method, path, status: reply.statusCode, ms, operation }
    app.log.info(
      { request: line },
      `${req.method} ${path} ${reply.statusCode} ${ms}ms${operation ? ` ${operation}` : ''}`,
    )
  })
})
