import { CompiledQuery, type DatabaseConnection, type Dialect, type Driver } from 'kysely'
import type { AuditEntry } from './audit.repository.js'
import { ScopedStorage } from '../lib/scoped-storage.js'

/**
 * The audit row of a mutating request, as it reads when the request succeeds. It is written in the request's first
 * change: before the COMMIT of the first transaction that the request's handler commits, or around the first write
 * statement the handler sends outside a transaction. The change and its row commit together or not at all.
 */
export interface PendingAudit {
  row: AuditEntry
  /** True once committed with a change. */
  written: boolean
  /** The row's id once written, when known. */
  id?: number
  /** Taken by a transaction or statement that has not ended yet. */
  claimed: boolean
  /** The handler ended: what commits later (work it started) is not the request's change. */
  closed: boolean
}

const current = new ScopedStorage<PendingAudit>()

/** Runs a request's handler with its pending audit row: the first change it commits carries the row. */
export function withRequestAudit<T>(audit: PendingAudit, handler: () => T): T {
  return current.run(audit, handler)
}

/**
 * The audit row of the request being handled, taken for one transaction or statement, or undefined when there is
 * none, it is written, or another change holds it. Its taker calls `settleAudit` once that change ended.
 */
export function claimAudit(): PendingAudit | undefined {
  const audit = current.getStore()
  if (!audit || audit.written || audit.claimed || audit.closed) return undefined
  audit.claimed = true
  return audit
}

/** Ends a claim: written when the change that carried the row committed, free again for the next change otherwise. */
export function settleAudit(audit: PendingAudit | undefined, committed: boolean): void {
  if (!audit) return
  audit.claimed = false
  if (committed) audit.written = true
}

const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode'])

/**
 * `dialect` with the request's audit row written in the request's first change: `compile` gives the row's insert
 * in the dialect's SQL. Every area's change gets its row this way, without handing it from the route to the service.
 */
export function auditingDialect(dialect: Dialect, compile: (row: AuditEntry) => CompiledQuery): Dialect {
  return {
    createDriver: () => auditingDriver(dialect.createDriver(), compile),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  }
}

function auditingDriver(driver: Driver, compile: (row: AuditEntry) => CompiledQuery): Driver {
  // The connections running a transaction.
  const open = new Set<DatabaseConnection>()
  const wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>()
  const inner = new WeakMap<DatabaseConnection, DatabaseConnection>()
  const raw = (c: DatabaseConnection) => inner.get(c) ?? c
  const insert = async (conn: DatabaseConnection, audit: PendingAudit) =>
    (await conn.executeQuery<{ id: number }>(compile(audit.row))).rows[0]?.id

  const wrap = (conn: DatabaseConnection): DatabaseConnection => {
    let w = wrapped.get(conn)
    if (w) return w
    w = {
      async executeQuery(query) {
        // A write outside a transaction: with the request's row unwritten, both in one transaction of their own.
        if (open.has(w as DatabaseConnection) || !WRITES.has(query.query.kind)) return conn.executeQuery(query)
        const audit = claimAudit()
        if (!audit) return conn.executeQuery(query)
        let committed = false
        try {
          await conn.executeQuery(CompiledQuery.raw('begin'))
          try {
            const result = await conn.executeQuery<never>(query)
            audit.id = await insert(conn, audit)
            await conn.executeQuery(CompiledQuery.raw('commit'))
            committed = true
            return result
          } finally {
            if (!committed) await conn.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined)
          }
        } finally {
          settleAudit(audit, committed)
        }
      },
      streamQuery: (query, chunkSize) => conn.streamQuery(query, chunkSize),
    }
    wrapped.set(conn, w)
    inner.set(w, conn)
    return w
  }

  return {
    init: () => driver.init(),
    acquireConnection: async () => wrap(await driver.acquireConnection()),
    releaseConnection: (c) => driver.releaseConnection(raw(c)),
    destroy: () => driver.destroy(),
    async beginTransaction(c, settings) {
      await driver.beginTransaction(raw(c), settings)
      open.add(c)
    },
    async commitTransaction(c) {
      const audit = claimAudit()
      let committed = false
      try {
        if (audit) audit.id = await insert(raw(c), audit)
        await driver.commitTransaction(raw(c))
        committed = true
      } finally {
        open.delete(c)
        settleAudit(audit, committed)
      }
    },
    async rollbackTransaction(c) {
      open.delete(c)
      await driver.rollbackTransaction(raw(c))
    },
    savepoint: async (c, name, compileQuery) => driver.savepoint?.(raw(c), name, compileQuery),
    rollbackToSavepoint: async (c, name, compileQuery) => driver.rollbackToSavepoint?.(raw(c), name, compileQuery),
    releaseSavepoint: async (c, name, compileQuery) => driver.releaseSavepoint?.(raw(c), name, compileQuery),
  }
}
