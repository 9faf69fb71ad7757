import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import type { Clock } from '../../clock.js'
import type { RequestJournal } from '../../ops/journal.js'
import { API_PREFIX } from '../constants.js'
import { routeOf } from '../route-hooks.js'

/**
 * Sandbox: keeps the last calls of the customer API (method, path, headers, body; the answer's status, headers, body
 * and duration) for the admin API to show. The call is kept as it is; the journal parses and redacts it when read.
 */
export const journalPlugin = fp(async (app, opts: { journal: RequestJournal; clock: Clock }) => {
  // The answer's body as sent, until the call is recorded (a stream, such as a file, is not kept).
  const sent = new WeakMap<FastifyRequest, string | Buffer>()
  app.addHook('onSend', async (req, _reply, payload) => {
    if (req.url.startsWith(API_PREFIX) && (typeof payload === 'string' || Buffer.isBuffer(payload)))
      sent.set(req, payload)
    return payload
  })
  app.addHook('onResponse', async (req, reply) => {
    if (!req.url.startsWith(API_PREFIX)) return
    const schema = routeOf(req).schema as { operationId?: string } | undefined
    const answer = sent.get(req) ?? null
    sent.delete(req)
    opts.journal.record({
      time: opts.clock.now(),
      request_id: String(req.id),
      method: req.method,
      path: req.url,
      operation: schema?.operationId ?? null,
      key_prefix: req.principal?.keyPrefix ?? null,
      body: req.body ?? null,
      request_headers: req.headers,
      status: reply.statusCode,
      response_headers: reply.getHeaders(),
      answer,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
    })
  })
})
