import fs from 'node:fs'
import { DEFAULT_MIGRATION_TABLE, sql } from 'kysely'
import type { Config } from '../config/config.js'
import { openDatabase } from './database.js'

/** Codes of a database server that cannot be reached, or that refuses this client (PostgreSQL SQLSTATEs). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'])
const REFUSED: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the role or this client is not allowed',
  '3D000': 'the database does not exist',
  '3F000': 'the schema (HOSTAPI_DB_SCHEMA) does not exist',
  '57P03': 'the server is starting up or shutting down',
}
/** Codes of a file or folder this process cannot create or write. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'ENOSPC', 'SQLITE_CANTOPEN', 'SQLITE_READONLY'])

function codes(err: unknown): string[] {
  const e = err as { code?: unknown; errors?: unknown[]; cause?: unknown }
  const own = typeof e?.code === 'string' ? [e.code] : []
  return [...own, ...(Array.isArray(e?.errors) ? e.errors.flatMap(codes) : []), ...(e?.cause ? codes(e.cause) : [])]
}

/** A PostgreSQL URL without its password, to be shown. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'DATABASE_URL'
  }
}

/**
 * The one line that explains why a start or a command could not use its database or its data folder (an
 * unreachable PostgreSQL, a refused login, a database that does not exist, a folder it cannot write), naming the
 * setting to change; null for any other failure.
 */
export function explainStartFailure(err: unknown, config: Config): string | null {
  const found = codes(err)
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err)
  const db = config.database
  if (db.dialect === 'postgres') {
    const where = `the PostgreSQL database at ${shownUrl(db.url)} (DATABASE_URL)`
    if (found.some((c) => UNREACHABLE.has(c))) return `Cannot reach ${where}: ${message || found.join(', ')}`
    const refused = found.find((c) => c in REFUSED)
    if (refused) return `Cannot use ${where}: ${REFUSED[refused]} (${message})`
  }
  if (found.some((c) => UNWRITABLE.has(c))) {
    const file = (err as { path?: unknown }).path
    const what = typeof file === 'string' ? file : db.dialect === 'sqlite' ? db.file : config.dataDir
    return `Cannot write ${what} (${message}): set HOSTAPI_DATA_DIR (or DATABASE_URL) to a place this user can write`
  }
  return null
}

/**
 * Whether the configured database exists and has been migrated at least once, creating nothing: a SQLite file is
 * looked for before it is opened; PostgreSQL is asked (a failure to connect is thrown, for explainStartFailure).
 */
export async function databaseIsSetUp(config: Config['database']): Promise<boolean> {
  if (config.dialect === 'sqlite' && config.file !== ':memory:' && !fs.existsSync(config.file)) return false
  const database = openDatabase(config)
  try {
    await sql`select 1`.execute(database.db)
    const table =
      config.dialect === 'postgres' && config.schema
        ? `${config.schema}.${DEFAULT_MIGRATION_TABLE}`
        : DEFAULT_MIGRATION_TABLE
    try {
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(database.db)
      return Number(rows[0]?.n ?? 0) > 0
    } catch {
      return false
    }
  } finally {
    await database.close()
  }
}
