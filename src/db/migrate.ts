import { DEFAULT_MIGRATION_TABLE, type DatabaseIntrospector, type Kysely, type Migration, Migrator, sql } from 'kysely'
import { onPostgres } from './database.js'
import { StartError } from '../config/config.js'
import type { AnyDb, MigrationModule } from './migrations/helpers.js'
import { migrations as releaseMigrations } from './migrations/index.js'
import type { DB } from './tables.js'

/**
 * The kind of every migration run, beside Kysely's table of executed migrations: what an instance of an older
 * release, which does not know a migration, reads to tell whether it can run on the schema (rolling upgrades,
 * rollback of the code).
 */
export const COMPAT_TABLE = 'migration_compat'

export interface MigrationReport {
  /** The migrations this call ran. */
  applied: string[]
  /** Migrations recorded in the database that this version does not know (of a newer release), all compatible. */
  newer: string[]
}

/** What an instance says when it starts on a database with migrations of a newer release, all compatible with it. */
export const newerMigrations = (newer: string[]): string =>
  `database has ${newer.length} newer migration${newer.length === 1 ? '' : 's'}, all compatible with this version`

/**
 * Runs every pending migration of `known` (this release's list) and records the kind of each. The database may hold
 * migrations of a newer release: the start goes on when each is recorded compatible with this version (an expand,
 * or a contract of an expand this version knows), and stops with a StartError naming the first one otherwise.
 * Safe to call from several instances at once: on PostgreSQL the migrator runs under an advisory lock.
 */
export async function migrate(
  db: Kysely<DB>,
  schema: string | null = null,
  known: Record<string, MigrationModule> = releaseMigrations,
): Promise<MigrationReport> {
  for (;;) {
    const executed = await executedMigrations(db, schema)
    const newer = executed.filter((name) => !Object.hasOwn(known, name))
    await checkNewer(db, schema, newer, known)
    // The usual start: nothing to run, answered by one read instead of the migrator's locking and table inspection.
    if (Object.keys(known).every((name) => executed.includes(name))) return { applied: [], newer }
    const migrator = new Migrator({
      db: onPostgres(db) ? withOwnSchemaIntrospection(db, schema) : db,
      provider: { getMigrations: async () => ({ ...alreadyRun(newer), ...recording(known, schema) }) },
      allowUnorderedMigrations: true,
      ...(schema ? { migrationTableSchema: schema } : {}),
    })
    const { error, results } = await migrator.migrateToLatest()
    const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
    if (!error) return { applied, newer }
    // An instance of a newer release migrated meanwhile (the migrator finds migrations it was not given): check those.
    const now = await executedMigrations(db, schema)
    if (applied.length > 0 || !now.some((name) => !Object.hasOwn(known, name) && !newer.includes(name))) throw error
  }
}

/**
 * `db` whose introspection sees only the tables of `schema` (or of the current schema). Kysely's own reads the columns
 * of every table of every schema of the database: slow where a database holds many schemas, and it fails (`relation
 * … does not exist`) when another schema's table is dropped while it reads. The migrator asks it only whether its
 * own tables exist.
 */
function withOwnSchemaIntrospection(db: Kysely<DB>, schema: string | null): Kysely<DB> {
  const introspection: DatabaseIntrospector = {
    getSchemas: async () =>
      (await sql<{ name: string }>`select nspname as name from pg_namespace`.execute(db)).rows.map((r) => ({
        name: r.name,
      })),
    getTables: async () =>
      (
        await sql<{ name: string; schema: string }>`select table_name as name, table_schema as schema
          from information_schema.tables
          where table_schema = ${schema ?? sql`current_schema()`}`.execute(db)
      ).rows.map((r) => ({ name: r.name, schema: r.schema, isView: false, columns: [] })),
    getMetadata: async () => ({ tables: await introspection.getTables() }),
  }
  // Kysely keeps its state in private fields: every other member is the database's own, bound to it.
  return new Proxy(db, {
    get(target, name) {
      if (name === 'introspection') return introspection
      const value = Reflect.get(target, name)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** The migrations of `known` not applied to the database (`schema`, or the current one): all of them before the first. */
export async function pendingMigrations(
  db: Kysely<DB>,
  schema: string | null,
  known: Record<string, MigrationModule>,
): Promise<string[]> {
  const executed = new Set(await executedMigrations(db, schema))
  return Object.keys(known).filter((name) => !executed.has(name))
}

/** The names in Kysely's table of executed migrations; none before the first migration. */
async function executedMigrations(db: Kysely<DB>, schema: string | null): Promise<string[]> {
  try {
    return (
      await sql<{ name: string }>`select name from ${table(schema, DEFAULT_MIGRATION_TABLE)}`.execute(db)
    ).rows.map((r) => r.name)
  } catch {
    return []
  }
}

const table = (schema: string | null, name: string) => (schema ? sql.table(`${schema}.${name}`) : sql.table(name))

/**
 * Throws a StartError, one line, naming the first migration in `newer` that this version cannot run with: one
 * recorded as a contract of an expand it does not know, or one whose kind is not recorded.
 */
async function checkNewer(
  db: Kysely<DB>,
  schema: string | null,
  newer: string[],
  known: Record<string, MigrationModule>,
): Promise<void> {
  if (newer.length === 0) return
  const records = await compatRecords(db, schema)
  for (const name of [...newer].sort()) {
    const record = records.get(name)
    if (record?.kind === 'expand') continue
    if (record?.kind === 'contract' && record.contracts !== null && Object.hasOwn(known, record.contracts)) continue
    const why = !record
      ? 'its kind is not recorded'
      : record.contracts
        ? `it contracts ${record.contracts}, which this version does not know`
        : 'it is a contract migration'
    throw new StartError(
      `The database has migration ${name} of a newer hostapi, and this version cannot run on it (${why}): ` +
        'start the newer version, or restore the database backup taken before the upgrade (docs/upgrades.md)',
    )
  }
}

interface CompatRecord {
  kind: string
  contracts: string | null
}

async function compatRecords(db: Kysely<DB>, schema: string | null): Promise<Map<string, CompatRecord>> {
  try {
    const { rows } = await sql<CompatRecord & { name: string }>`select name, kind, contracts from ${table(
      schema,
      COMPAT_TABLE,
    )}`.execute(db)
    return new Map(rows.map((r) => [r.name, { kind: r.kind, contracts: r.contracts }]))
  } catch {
    return new Map()
  }
}

/** Placeholders for migrations a newer release ran: the migrator wants every executed one in its list. */
function alreadyRun(names: string[]): Record<string, Migration> {
  const ran: Migration = {
    up: async () => {
      throw new Error('a migration of a newer release is never run by this one')
    },
  }
  return Object.fromEntries(names.map((name) => [name, ran]))
}

/** The migrations, each recording its kind in the transaction (PostgreSQL) that runs it. */
function recording(known: Record<string, MigrationModule>, schema: string | null): Record<string, Migration> {
  return Object.fromEntries(
    Object.entries(known).map(([name, m]) => [
      name,
      {
        up: async (db: AnyDb) => {
          await m.up(db)
          await recordKind(db, schema, name, m)
        },
        ...(m.down ? { down: m.down } : {}),
      },
    ]),
  )
}

async function recordKind(db: AnyDb, schema: string | null, name: string, m: MigrationModule): Promise<void> {
  const scoped = schema ? db.withSchema(schema) : db
  // Created by the first migration run under the migration lock, as Kysely's own table is beside it.
  await scoped.schema
    .createTable(COMPAT_TABLE)
    .ifNotExists()
    .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('contracts', 'varchar(255)')
    .execute()
  const contracts = m.kind === 'contract' ? (m.contracts ?? null) : null
  await scoped
    .insertInto(COMPAT_TABLE)
    .values({ name, kind: m.kind, contracts })
    .onConflict((oc) => oc.column('name').doUpdateSet({ kind: m.kind, contracts }))
    .execute()
}
