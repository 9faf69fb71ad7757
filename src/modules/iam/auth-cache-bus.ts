import { sql, type Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { DB } from '../../db/tables.js'
import { loadPg } from '../../db/database.js'

/** Tells the other instances on the same database that cached key lookups are stale. */
export interface InvalidationBus {
  /** Announces a change to every instance, this one included. */
  publish(): Promise<void>
  close(): Promise<void>
}

/**
 * The bus over PostgreSQL LISTEN/NOTIFY: one listening connection per instance; a channel per schema, so
 * deployments (and test runs) sharing a server do not hear each other.
 */
export async function postgresInvalidationBus(
  db: Kysely<DB>,
  database: { url: string; schema: string | null },
  onChange: () => void,
  log: Logger,
): Promise<InvalidationBus> {
  const channel = `hostapi_auth_${(database.schema ?? 'public').replace(/[^a-z0-9_]/gi, '_')}`
    .slice(0, 63)
    .toLowerCase()
  const listener = new (loadPg().Client)({ connectionString: database.url })
  listener.on('error', (err) =>
    log.warn({ err: err.message }, 'auth cache listener failed; other instances fall back to the cache lifetime'),
  )
  listener.on('notification', (n) => {
    if (n.channel === channel) onChange()
  })
  await listener.connect()
  await listener.query(`listen ${channel}`)
  return {
    async publish() {
      await sql`select pg_notify(${channel}, '')`.execute(db)
    },
    async close() {
      await listener.end().catch(() => undefined)
    },
  }
}
