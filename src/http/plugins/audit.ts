import fp from 'fastify-plugin'
import type { FastifyRequest, onSendHookHandler, RouteHandlerMethod } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { insertAuditEntry, setAuditStatus } from '../../db/audit.repository.js'
import { type PendingAudit, withRequestAudit } from '../../db/request-audit.js'
import { callerIp } from '../caller.js'
import { asArray, onSendOfMutatingRoutes, READ_METHODS } from '../route-hooks.js'

/**
 * Records every mutating call to a known route (admin routes included): who, from where, what, and how it ended.
 * The row as it reads on success is pending while the handler runs, and the database writes it with the handler's
 * first change, in the change's transaction (src/db/request-audit.ts): a change never commits without its row, nor
 * the row without the change. A call that changed nothing gets its row before the answer leaves, so a caller that
 * reads the log next finds its call in it; one whose answer is not 200 after its change committed has its row's
 * status set to the answer's.
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

  app.addHook('onRoute', (route) => {
    if (asArray(route.method).every((m) => READ_METHODS.has(m))) return
    const handler = route.handler as (this: unknown, ...args: Parameters<RouteHandlerMethod>) => unknown
    route.handler = function (this: unknown, req, reply) {
      const audit: PendingAudit = { row: rowOf(req, 200), written: false, claimed: false, closed: false }
      pending.set(req, audit)
      const close = () => {
        audit.closed = true
      }
      let result: unknown
      try {
        result = withRequestAudit(audit, () => handler.call(this, req, reply))
      } catch (err) {
        close()
        throw err
      }
      // The handler's own result, as it gave it: a promise (ended when it settles) or a value.
      if (result instanceof Promise) return result.finally(close)
      close()
      return result
    }
  })

  const record: onSendHookHandler = async (req, reply, payload) => {
    const done = pending.get(req)
    if (done?.written && done.row.status === reply.statusCode) return payload
    try {
      // The row written with the change, and the answer is another: the row gets the answer's status.
      if (done?.written && done.id !== undefined) await setAuditStatus(opts.db, done.id, reply.statusCode)
      else await insertAuditEntry(opts.db, rowOf(req, reply.statusCode))
    } catch (err) {
      req.log.error({ err }, 'audit log write failed')
    }
    return payload
  }
  onSendOfMutatingRoutes(app, record)
})
