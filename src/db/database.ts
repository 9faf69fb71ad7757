import fs from 'node:fs'
import path from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Transaction } from 'kysely'
import type { Config } from '../config/config.js'
import type { DB } from './tables.js'
import { migrations } from './migrations/index.js'

/** The data layer handle: a Kysely instance or a transaction on it. */
export type Db = Kysely<DB> | Transaction<DB>
export type Dialect = 'sqlite' | 'postgres'

// COUNT(*) and BIGINT come back as strings from pg; every count here fits in a JS number.
pg.types.setTypeParser(20, (v) => Number(v))
pg.types.setTypeParser(1700, (v) => Number(v))

export interface Database {
  db: Kysely<DB>
  dialect: Dialect
  /** The PostgreSQL schema everything lives in, when not the default. */
  schema: string | null
  close(): Promise<void>
}

/** Opens the configured database. SQLite runs in WAL mode with full fsync, so an acknowledged write survives a crash. */
export function openDatabase(config: Config['database']): Database {
  if (config.dialect === 'sqlite') {
    if (config.file !== ':memory:') fs.mkdirSync(path.dirname(config.file), { recursive: true })
    const sqlite = new SqliteDatabase(config.file)
    sqlite.pragma('journal_mode = WAL')
    sqlite.pragma('synchronous = FULL')
    sqlite.pragma('foreign_keys = ON')
    sqlite.pragma('busy_timeout = 5000')
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
    return { db, dialect: 'sqlite', schema: null, close: () => db.destroy() }
  }
  const pool = new pg.Pool({
    connectionString: config.url,
    max: 10,
    ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
  })
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) })
  return { db, dialect: 'postgres', schema: config.schema, close: () => db.destroy() }
}

const STATEMENT_CACHE_SIZE = 2000

/**
 * better-sqlite3 compiles a statement on every `prepare`; Kysely prepares on every query. Reusing the
 * prepared statement per SQL text removes that cost (the connection is used by one query at a time).
 */
function withStatementCache(sqlite: SqliteDatabase.Database) {
  const cache = new Map<string, SqliteDatabase.Statement>()
  return {
    prepare(text: string) {
      let stmt = cache.get(text)
      if (!stmt) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear()
        stmt = sqlite.prepare(text)
        cache.set(text, stmt)
      }
      return stmt
    },
    close: () => sqlite.close(),
  }
}

/** Runs every pending migration; safe to call from several instances at once. */
export async function migrate(db: Kysely<DB>, schema: string | null = null): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** True when every known migration has been applied. */
export async function migrationsApplied(db: Kysely<DB>, schema: string | null = null): Promise<boolean> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) })
  const list = await migrator.getMigrations()
  return list.every((m) => m.executedAt !== undefined)
}

/** A cheap round trip to the database. */
export async function ping(db: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(db)
}
