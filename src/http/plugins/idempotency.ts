import fp from 'fastify-plugin'
import type { onSendHookHandler } from 'fastify'
import { errors } from '../../errors.js'
import { IdempotencyService } from '../../modules/idempotency/idempotency.service.js'
import { dry } from '../dry-run.js'
import { asArray, routeOf } from '../route-hooks.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The Idempotency-Key this request claimed, to store its response under. */
    idempotencyKey: string | null
  }
}

const KEY = /^[\x21-\x7e]{1,255}$/

/**
 * Routes with `config.idempotent` honour `Idempotency-Key`: checked after validation (so an invalid request
 * never claims a key), the response stored before it is sent. A dry run (`?test=1`) neither claims nor replays a key:
 * it stores nothing, and the real call after it with the same key must still run.
 */
export const idempotencyPlugin = fp(async (app, opts: { service: IdempotencyService }) => {
  app.decorateRequest('idempotencyKey', null)
  const store: onSendHookHandler = async (req, reply, payload) => {
    if (req.idempotencyKey && req.principal && reply.getHeader('idempotent-replayed') === undefined) {
      const key = req.idempotencyKey
      req.idempotencyKey = null
      await opts.service.finish(req.principal.accountId, key, {
        status: reply.statusCode,
        contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
        body:
          typeof payload === 'string'
            ? payload
            : Buffer.isBuffer(payload)
              ? payload.toString('utf8')
              : JSON.stringify(payload),
      })
    }
    return payload
  }
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return
    route.onSend = [...asArray(route.onSend), store]
    route.preHandler = [
      async (req, reply) => {
        const header = req.headers['idempotency-key']
        if (header === undefined || !req.principal || dry(req).dryRun) return
        const key = Array.isArray(header) ? header[0] : header
        if (!KEY.test(key)) throw errors.invalidIdempotencyKey()
        const hash = IdempotencyService.hash(req.method, routeOf(req).url ?? req.url, {
          params: req.params,
          query: req.query,
          body: req.body,
        })
        const outcome = await opts.service.begin(req.principal.accountId, key, hash)
        if (outcome.kind === 'replay') {
          reply.header('idempotent-replayed', 'true')
          return reply.code(outcome.status).type(outcome.contentType).send(outcome.body)
        }
        req.idempotencyKey = key
      },
      ...asArray(route.preHandler),
    ]
  })
})
