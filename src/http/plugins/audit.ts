import fp from 'fastify-plugin'
import type { onSendHookHandler } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { insertAuditEntry } from '../../db/audit.js'
import { callerIp } from '../caller.js'
import { onSendOfMutatingRoutes } from '../route-hooks.js'

/**
 * Records every mutating call to a known route (admin routes included): who, from where, what, and how it ended.
 * The row is written before the answer leaves, so a caller that reads the log next finds its call in it.
 */
export const auditPlugin = fp(async (app, opts: { db: Kysely<DB>; clock: Clock }) => {
  const record: onSendHookHandler = async (req, reply, payload) => {
    const who = req.principal
    try {
      await insertAuditEntry(opts.db, {
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
    } catch (err) {
      req.log.error({ err }, 'audit log write failed')
    }
    return payload
  }
  onSendOfMutatingRoutes(app, record)
})
