import fp from 'fastify-plugin'
import type { Clock } from '../../clock.js'
import type { RequestJournal } from '../../ops/journal.js'
import { API_PREFIX } from '../constants.js'

/** Sandbox: keeps the last calls of the customer API (method, path, body, status) for the admin API to show. */
export const journalPlugin = fp(async (app, opts: { journal: RequestJournal; clock: Clock }) => {
  app.addHook('onResponse', async (req, reply) => {
    if (!req.url.startsWith(API_PREFIX)) return
    const schema = req.routeOptions.schema as { operationId?: string } | undefined
    opts.journal.record({
      time: opts.clock.now(),
      request_id: String(req.id),
      method: req.method,
      path: req.url,
      operation: schema?.operationId ?? null,
      key_prefix: req.principal?.keyPrefix ?? null,
      body: req.body ?? null,
      status: reply.statusCode,
    })
  })
})
