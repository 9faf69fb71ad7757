import fs from 'node:fs'
import path from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import type pg from 'pg'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect as KyselyDialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  sql,
  type Transaction,
} from 'kysely'
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import { DB_CONNECT_TIMEOUT_MS } from '../config/database.js'
import type { DB } from './tables.js'
import { lazyRequire } from '../lazy-require.js'
import { batchPerTurn } from '../lib/turn-batch.js'
import { ownerOrderKey } from '../lib/dns/owner-order.js'
import { auditInsert, type AuditEntry } from './audit.repository.js'
import { auditingDialect } from './request-audit.js'
import { preparedStatements } from './prepared.js'
import { checkpointInThread } from './sqlite-checkpoint.js'

/** The data layer handle: a Kysely instance or a transaction on it. */
export type Db = Kysely<DB> | Transaction<DB>
export type Dialect = 'sqlite' | 'postgres'

/**
 * The same connection typed to some tables alone (a driver's own, `T` as `DB` declares them), so a query naming any
 * other table does not compile: the handle a part of the schema's owner hands to a driver.
 */
export const ownTables = <T extends { [K in keyof T]: K extends keyof DB ? DB[K] : never }>(
  db: Kysely<DB>,
): Kysely<T> => db as unknown as Kysely<T>

/** True when `db` runs on PostgreSQL: for the few statements written differently there. */
export const onPostgres = (db: Pick<Db, 'getExecutor'>): boolean => db.getExecutor().adapter instanceof PostgresAdapter

/** The version of an account with no row in account_versions: none of its data was written since migration 0470. */
const NO_WRITE_YET = '0'

const requirePg = lazyRequire<typeof pg>('pg')

/** pg, loaded when PostgreSQL is used. */
export function loadPg(): typeof pg {
  const pg = requirePg()
  // COUNT(*) and BIGINT come back as strings from pg; every count here fits in a JS number.
  pg.types.setTypeParser(20, (v) => Number(v))
  pg.types.setTypeParser(1700, (v) => Number(v))
  return pg
}

export interface Database {
  db: Kysely<DB>
  dialect: Dialect
  /** The PostgreSQL schema everything lives in, when not the default. */
  schema: string | null
  /**
   * Resolves once every transaction committed before the call is on disk. Callers await it before
   * acknowledging a write. On PostgreSQL a commit is already durable (synchronous_commit); on SQLite
   * concurrent callers share one fsync of the write-ahead log (group commit).
   */
  durable(): Promise<void>
  /**
   * SQLite: a value that changes whenever data changes, by this process or any other, read without I/O. Answers
   * computed between two equal readings can be reused. Null on PostgreSQL, which has no cheap exact one.
   */
  dataVersion: (() => string) | null
  /**
   * Statements sent to the database since it was opened: every query, BEGIN, COMMIT and ROLLBACK (on SQLite every
   * statement executed through Kysely). A round trip on PostgreSQL; a count of how much work a request does.
   */
  roundTrips(): number
  /** Queries Kysely compiled to SQL text since the database was opened (src/db/compiled.ts compiles each read once). */
  compiles(): number
  /**
   * PostgreSQL: the statements that could be named prepared statements (with parameters, outside a transaction) sent
   * unnamed so far, and those sent named (src/db/prepared.ts).
   */
  statementCounts: (() => { unnamed: number; named: number }) | null
  /**
   * PostgreSQL: the version of one account's data, read with one indexed query. Triggers set it in the
   * transaction of every write to a table the cacheable answers show (migration 0470), so a reading taken
   * before an answer's data was read changes once any of that data does. The readings asked for within one
   * event-loop turn share one query, sent after the turn: one round trip for a burst of cached requests, and
   * never a query sent before the reading was asked for. Null on SQLite.
   */
  accountVersion: ((accountId: number) => Promise<string>) | null
  close(): Promise<void>
}

/** How long a statement on SQLite waits for another connection's write lock before it fails (503, Retry-After). */
export const SQLITE_LOCK_WAIT_MS = 5000

const isBusy = (err: unknown) => String((err as { code?: unknown } | null)?.code ?? '').startsWith('SQLITE_BUSY')

/**
 * Runs `attempt` until it does not fail for a lock another connection holds, waiting between attempts on a timer (1 ms,
 * doubling to 50), for at most SQLITE_LOCK_WAIT_MS. SQLite's own busy timeout would wait inside the synchronous
 * call, and so hold this process's event loop, and every request it serves, for as long as the other connection (a
 * worker of `serve --workers N`, the command line, a backup) keeps its transaction open. A statement that failed so had
 * no effect.
 */
async function waitingForLock<T>(attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + SQLITE_LOCK_WAIT_MS
  for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
    try {
      return await attempt()
    } catch (err) {
      if (!isBusy(err) || Date.now() + delay > deadline) throw err
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
}

/**
 * SQLite with every transaction begun `IMMEDIATE`: it takes the write lock at its start. A deferred transaction that
 * reads and then writes fails at once with `database is locked` when another process (a worker of
 * `serve --workers N`) committed in between; one process alone never waits. Every statement outside a transaction,
 * the BEGIN included, waits for the lock with waitingForLock (inside one this connection holds the write lock, and a
 * failed statement is the transaction's to handle). The connection's busy timeout is 0.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    config: ConstructorParameters<typeof SqliteDialect>[0],
    private readonly inTransaction: () => boolean,
  ) {
    super(config)
  }

  override createDriver(): Driver {
    const driver = super.createDriver()
    const inTransaction = this.inTransaction
    // Sent through the connection below, outside a transaction until it succeeds: waited for there.
    driver.beginTransaction = async (connection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'))
    }
    const acquire = driver.acquireConnection.bind(driver)
    const wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>()
    driver.acquireConnection = async () => {
      const conn = await acquire()
      let w = wrapped.get(conn)
      if (!w) {
        w = {
          executeQuery: (query) =>
            inTransaction() ? conn.executeQuery(query) : waitingForLock(() => conn.executeQuery(query)),
          streamQuery: (query, chunkSize) => conn.streamQuery(query, chunkSize),
        }
        wrapped.set(conn, w)
      }
      return w
    }
    return driver
  }
}

/**
 * Opens the configured database. SQLite runs in WAL mode with `synchronous = NORMAL`: a commit is a write
 * to the log, and `durable()` fsyncs the log once for every commit made since the last fsync, so an
 * acknowledged write survives a crash or a power cut while the commits of concurrent requests share one fsync.
 */
export function openDatabase(config: Config['database'], opts: { log?: Logger } = {}): Database {
  if (config.dialect === 'sqlite') {
    if (config.file !== ':memory:') {
      fs.mkdirSync(path.dirname(config.file), { recursive: true, mode: 0o700 })
      // Created owner-only before SQLite opens it: SQLite gives the -wal and -shm files the database file's mode.
      fs.closeSync(fs.openSync(config.file, 'a', 0o600))
    }
    const sqlite = new SqliteDatabase(config.file)
    sqlite.pragma('journal_mode = WAL')
    sqlite.pragma('synchronous = NORMAL')
    sqlite.pragma('foreign_keys = ON')
    // Locks are waited for on a timer, not inside SQLite (waitingForLock).
    sqlite.pragma('busy_timeout = 0')
    // The order of a zone's records in reads built by the database (src/modules/domains/dns/dns-json.repository.ts).
    sqlite.function('dns_owner_key', { deterministic: true }, (apex, name) => ownerOrderKey(String(apex), String(name)))
    if (dropStat4Samples(sqlite)) opts.log?.info('dropped the STAT4 samples a plain ANALYZE wrote (sqlite_stat1 kept)')
    const counted = withStatementCache(sqlite)
    const compiles = { count: 0 }
    const db = auditing(
      (compile) =>
        auditingDialect(new ImmediateSqliteDialect({ database: counted }, () => sqlite.inTransaction), compile),
      compiles,
    )
    const wal = config.file === ':memory:' ? null : new GroupCommit(`${config.file}-wal`)
    const checkpoints = config.file === ':memory:' ? null : checkpointInThread(sqlite, config.file, opts.log)
    // Commits by other connections, read once per event-loop turn (see dataVersion).
    const commits = sqlite.prepare('SELECT data_version FROM pragma_data_version').pluck()
    let seenCommits: number | null = null
    return {
      db,
      dialect: 'sqlite',
      schema: null,
      durable: () => wal?.durable() ?? Promise.resolve(),
      // This connection's writing statements, counted as they run (its reads see them at once, committed or not),
      // and the commits of other connections. The latter is read at most once per event-loop turn: a request handled
      // in this turn arrived before the reading, so a commit made after it was concurrent with the request.
      dataVersion: () => {
        if (seenCommits === null) {
          seenCommits = commits.get() as number
          setImmediate(() => {
            seenCommits = null
          })
        }
        return `${counted.writes}.${seenCommits}`
      },
      roundTrips: () => counted.executed,
      compiles: () => compiles.count,
      statementCounts: null,
      accountVersion: null,
      close: async () => {
        await checkpoints?.stop()
        await db.destroy()
        wal?.close()
      },
    }
  }
  const pool = new (loadPg().Pool)({
    connectionString: config.url,
    max: 10,
    // A query waits at most this long for a connection (a new one, or a busy one freed); then it fails, and its
    // request is answered 503: a dead address or a proxy with no primary behind it holds no request for long.
    connectionTimeoutMillis: config.connectTimeoutMs ?? DB_CONNECT_TIMEOUT_MS,
    // A server that vanished without closing its connections (a machine gone) is found by the kernel's probes.
    keepAlive: true,
    ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
  })
  // A pooled connection that is lost while idle (the server died, a failover closed it) is reported here and
  // dropped from the pool, which connects anew for the next query. Without a listener the 'error' event would end
  // the process.
  pool.on('error', (err) => opts.log?.warn({ err }, 'idle database connection lost'))
  let roundTrips = 0
  const prepared = config.preparedStatements === false ? null : preparedStatements()
  // Kysely sends every query, BEGIN and COMMIT through client.query of a pooled client.
  pool.on('connect', (client) => {
    prepared?.attach(client)
    // A connection lost while a request holds it between two statements: its next statement fails (and the
    // request with it), and the pool drops it when it is released. Without a listener the process would end.
    client.on('error', (err) => opts.log?.warn({ err }, 'database connection lost'))
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    client.query = ((...args: unknown[]) => {
      roundTrips++
      return query(...args)
    }) as typeof client.query
  })
  const compiles = { count: 0 }
  const db = auditing((compile) => auditingDialect(new PostgresDialect({ pool }), compile), compiles)
  return {
    db,
    dialect: 'postgres',
    schema: config.schema,
    durable: () => Promise.resolve(),
    dataVersion: null,
    roundTrips: () => roundTrips,
    compiles: () => compiles.count,
    statementCounts: prepared && (() => prepared.counts()),
    accountVersion: batchPerTurn(async (accounts: number[]) => {
      // A named statement: parsed and planned once per connection.
      const { rows } = await pool.query<{ account_id: number; version: number }>({
        name: 'hostapi_account_versions',
        text: 'select account_id, version from account_versions where account_id = any($1)',
        values: [accounts],
      })
      return new Map(rows.map((r) => [r.account_id, String(r.version)]))
    }, NO_WRITE_YET),
    close: () => db.destroy(),
  }
}

/**
 * Group commit for SQLite's write-ahead log: `durable()` waits for an fsync of the log that started after
 * the call. One fsync runs at a time (in libuv's thread pool, so requests go on meanwhile); every caller
 * that arrives during it is served by the next one. fsync acts on the file, whichever descriptor names it.
 */
export class GroupCommit {
  private fd: number | null = null
  private running: Promise<void> | null = null
  private next: Promise<void> | null = null

  constructor(private readonly file: string) {}

  durable(): Promise<void> {
    if (!this.running) return this.start()
    // The next fsync starts once this one ends, whether it succeeded or not.
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = null
        return this.start()
      })
    return this.next
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd)
    this.fd = null
  }

  private start(): Promise<void> {
    this.running = this.sync().finally(() => {
      this.running = null
    })
    return this.running
  }

  private async sync(): Promise<void> {
    // The log exists once the first transaction is committed; SQLite removes it only when the last connection closes.
    if (this.fd === null) {
      if (!fs.existsSync(this.file)) return
      this.fd = fs.openSync(this.file, 'r')
    }
    const fd = this.fd
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())))
    if (fs.fstatSync(fd).nlink === 0) {
      // Another process closed the database last and the log was recreated: sync the new file.
      this.close()
      await this.sync()
    }
  }
}

/**
 * A Kysely instance over `dialect`, which writes a request's audit row with its change (src/db/request-audit.ts),
 * counting in `compiles` the queries it compiles.
 */
function auditing(
  dialect: (compile: (row: AuditEntry) => CompiledQuery) => KyselyDialect,
  compiles: { count: number },
): Kysely<DB> {
  const inner = dialect((row) => auditInsert(db, row).compile())
  const counting: KyselyDialect = {
    createDriver: () => inner.createDriver(),
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (k) => inner.createIntrospector(k),
    createQueryCompiler: () => {
      const compiler = inner.createQueryCompiler()
      const compileQuery = compiler.compileQuery.bind(compiler)
      compiler.compileQuery = (node, queryId) => {
        compiles.count++
        return compileQuery(node, queryId)
      }
      return compiler
    },
  }
  const db: Kysely<DB> = new Kysely<DB>({ dialect: counting })
  return db
}

const STATEMENT_CACHE_SIZE = 2000

/**
 * SQLite built with STAT4 (better-sqlite3 is) plans a statement with the values bound to it when an index it may use
 * has STAT4 samples (`sqlite_stat4`, written by a plain `ANALYZE`): such a statement is marked to be compiled again
 * whenever a value is bound, that is at every run, and the statement cache below saves nothing (measured: the
 * `GET /vps` statement spent about 28 µs of every uncached read in it). The samples are dropped at open and the
 * statistics reloaded; `sqlite_stat1` stays. `PRAGMA optimize`, SQLite's recommended way to refresh statistics,
 * writes none (it limits its analysis). A connection busy elsewhere leaves them for the next open. True when
 * samples were dropped.
 */
export function dropStat4Samples(sqlite: SqliteDatabase.Database): boolean {
  const hasTable = sqlite.prepare("select 1 from sqlite_schema where type = 'table' and name = 'sqlite_stat4'").get()
  if (!hasTable || !sqlite.prepare('select 1 from sqlite_stat4 limit 1').get()) return false
  try {
    sqlite.exec('delete from sqlite_stat4; analyze sqlite_schema')
    return true
  } catch (err) {
    if (isBusy(err)) return false
    throw err
  }
}

/**
 * better-sqlite3 compiles a statement on every `prepare`; Kysely prepares on every query. Reusing the
 * prepared statement per SQL text removes that cost (the connection is used by one query at a time).
 * Kysely prepares once per statement it executes (BEGIN and COMMIT too), so `executed` counts them, and runs it in the
 * same synchronous step, so `writes` moves before any later read.
 */
function withStatementCache(sqlite: SqliteDatabase.Database) {
  const cache = new Map<string, SqliteDatabase.Statement>()
  const handle = {
    executed: 0,
    /** Statements that may write (not read-only), counted when prepared: Kysely runs a statement as it prepares it. */
    writes: 0,
    prepare(text: string) {
      handle.executed++
      let stmt = cache.get(text)
      if (!stmt) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear()
        stmt = sqlite.prepare(text)
        cache.set(text, stmt)
      }
      if (!stmt.readonly) handle.writes++
      return stmt
    },
    close: () => sqlite.close(),
  }
  return handle
}

/** A cheap round trip to the database. */
export async function ping(db: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(db)
}
