import fp from 'fastify-plugin'
import type { FastifyRequest, onSendHookHandler } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { insertAuditEntry, type PendingAudit } from '../../db/audit.js'
import { callerIp } from '../caller.js'
import { onSendOfMutatingRoutes } from '../route-hooks.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The audit row of this request, as it reads when the request succeeds, for a service to write in the
     * transaction of its change; the row is then not written again unless the answer's status differs.
     */
    auditInTransaction(): PendingAudit
  }
}

/**
 * Records every mutating call to a known route (admin routes included): who, from where, what, and how it ended.
 * The row is written before the answer leaves, so a caller that reads the log next finds its call in it.
 */
export const auditPlugin = fp(async (app, opts: { db: Kysely<DB>; clock: Clock }) => {
  const pending = new WeakMap<FastifyRequest, PendingAudit>()
  const rowOf = (req: FastifyRequest, status: number) => {
    const who = req.principal
    return {
      account_id: who?.accountId ?? null,
      user_id: who?.userId ?? null,
      // An admin call is recorded under the prefix of the admin token that made it.
      key_prefix: who?.keyPrefix ?? req.adminToken?.prefix ?? null,
      ip: callerIp(req),
      method: req.method,
      path: req.url.split('?')[0],
      status,
      request_id: String(req.id),
      created_at: iso(opts.clock.now()),
    }
  }

  app.decorateRequest('auditInTransaction', function (this: FastifyRequest) {
    const audit = { row: rowOf(this, 200), written: false }
    pending.set(this, audit)
    return audit
  })

  const record: onSendHookHandler = async (req, reply, payload) => {
    const done = pending.get(req)
    if (done?.written && done.row.status === reply.statusCode) return payload
    try {
      await insertAuditEntry(opts.db, rowOf(req, reply.statusCode))
    } catch (err) {
      req.log.error({ err }, 'audit log write failed')
    }
    return payload
  }
  onSendOfMutatingRoutes(app, record)
})
