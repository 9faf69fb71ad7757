import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { callerIp } from '../caller.js'

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Records every mutating call to a known route: who, from where, what, and how it ended. */
export const auditPlugin = fp(async (app, opts: { db: Kysely<DB>; clock: Clock }) => {
  app.addHook('onResponse', async (req, reply) => {
    if (READ_METHODS.has(req.method) || !req.routeOptions.url) return
    const who = req.principal
    try {
      await opts.db
        .insertInto('audit_log')
        .values({
          account_id: who?.accountId ?? null,
          user_id: who?.userId ?? null,
          key_prefix: who?.keyPrefix ?? null,
          ip: callerIp(req),
          method: req.method,
          path: req.url.split('?')[0],
          status: reply.statusCode,
          request_id: String(req.id),
          created_at: iso(opts.clock.now()),
        })
        .execute()
    } catch (err) {
      req.log.error({ err }, 'audit log write failed')
    }
  })
})
