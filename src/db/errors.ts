/** Maps driver errors of both dialects to the few kinds the services care about. */
export type DbErrorKind = 'unique' | 'foreign_key' | 'other'

export function dbErrorKind(err: unknown): DbErrorKind {
  const code = (err as { code?: unknown } | null)?.code
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
    return 'unique'
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return 'foreign_key'
  return 'other'
}

export const isUniqueViolation = (err: unknown): boolean => dbErrorKind(err) === 'unique'

/** Socket errors of a database server that is down, unreachable or gone in the middle of a conversation. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])
/**
 * PostgreSQL SQLSTATEs of a server that cannot serve now: class 08 (connection exception), the server shutting
 * down or crashed (57P01, 57P02), starting up or in recovery (57P03), too many connections (53300), and a server
 * that takes no writes (25006: a standby, before it is promoted).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '25006'])
/** node-postgres reports a lost or never made connection by message only. */
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
]

/**
 * True when `err` says the database cannot be used at the moment, not that the statement is wrong: no connection
 * could be made (refused, timed out), it was lost during the statement, the server is a standby or shutting
 * down, or (SQLite) another connection kept the write lock too long. What was not committed when such an error came
 * is not acknowledged; the caller may try again later.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown[] }
  if (typeof e.code === 'string' && (CONNECTION_CODES.has(e.code) || UNAVAILABLE_STATES.has(e.code))) return true
  if (typeof e.code === 'string' && /^08[0-9A-Z]{3}$/.test(e.code)) return true
  // SQLite: another connection held the write lock for all of SQLITE_LOCK_WAIT_MS.
  if (typeof e.code === 'string' && e.code.startsWith('SQLITE_BUSY')) return true
  if (typeof e.message === 'string' && CONNECTION_MESSAGES.some((m) => (e.message as string).startsWith(m))) return true
  // An AggregateError of a connect to several addresses; a wrapped cause.
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true
  return isDatabaseUnavailable(e.cause, depth + 1)
}
