import fp from 'fastify-plugin'
import type { onResponseHookHandler } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { callerIp } from '../caller.js'

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Records every mutating call to a known route (admin routes included): who, from where, what, and how it ended. */
export const auditPlugin = fp(async (app, opts: { db: Kysely<DB>; clock: Clock }) => {
  const record: onResponseHookHandler = async (req, reply) => {
    const who = req.principal
    try {
      await opts.db
        .insertInto('audit_log')
        .values({
          account_id: who?.accountId ?? null,
          user_id: who?.userId ?? null,
          // An admin call is recorded under the prefix of the admin token that made it.
          key_prefix: who?.keyPrefix ?? req.adminToken?.prefix ?? null,
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
  }
  // Only mutating routes carry the hook, so reads pay nothing for it.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (methods.every((m) => READ_METHODS.has(m))) return
    const existing = route.onResponse ? (Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]) : []
    route.onResponse = [...existing, record]
  })
})
