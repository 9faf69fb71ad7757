import type { EnvReader } from './env-reader.js'

/** Default of HOSTAPI_DB_CONNECT_TIMEOUT_MS: the longest a query waits for a pooled connection to PostgreSQL. */
export const DB_CONNECT_TIMEOUT_MS = 5000

/** A PostgreSQL database: its URL, the schema everything lives in (HOSTAPI_DB_SCHEMA), the connect timeout. */
export interface PostgresConfig {
  dialect: 'postgres'
  url: string
  schema: string | null
  /**
   * HOSTAPI_DB_CONNECT_TIMEOUT_MS: how long a query waits for a connection of the pool (a new one to be made, or a
   * busy one to be freed) before it fails and the request is answered 503 with Retry-After; without it a request
   * would wait for as long as the operating system tries to reach an address that does not answer. Unset:
   * DB_CONNECT_TIMEOUT_MS.
   */
  connectTimeoutMs?: number
  /**
   * HOSTAPI_DB_PREPARED_STATEMENTS: repeated statements are named prepared statements, parsed and planned once per
   * connection (src/db/prepared.ts). Off for a pooler in transaction mode that does not keep them (PgBouncer before
   * 1.21, or without `max_prepared_statements`). Unset: on.
   */
  preparedStatements?: boolean
}

/**
 * The PostgreSQL database DATABASE_URL names, with its settings. A URL with several hosts (libpq's
 * `postgres://h1,h2/db?target_session_attrs=read-write`) is refused: node-postgres connects to one host and does not
 * read target_session_attrs, so such a URL would not fail over; a proxy in front gives one address
 * (docs/high-availability.md).
 */
export function postgresConfig(r: EnvReader, url: string): PostgresConfig {
  const hosts = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?([^/?#]*)/.exec(url)?.[1] ?? ''
  if (hosts.includes(','))
    r.problem(
      'DATABASE_URL names several hosts: hostapi connects to one address; put a proxy that leads to the primary ' +
        '(HAProxy, PgBouncer, a Patroni-managed address) in front and name it (docs/high-availability.md)',
    )
  return {
    dialect: 'postgres',
    url,
    schema: r.env.HOSTAPI_DB_SCHEMA || null,
    connectTimeoutMs: r.int('HOSTAPI_DB_CONNECT_TIMEOUT_MS', DB_CONNECT_TIMEOUT_MS, 100, 600_000),
    preparedStatements: r.bool('HOSTAPI_DB_PREPARED_STATEMENTS', true),
  }
}
