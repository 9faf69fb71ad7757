import fs from 'node:fs'
import { type Insertable, Migrator } from 'kysely'
import { type Database, type Dialect, openDatabase } from '../../src/db/database.js'
import { migrate } from '../../src/db/migrate.js'
import { migrations } from '../../src/db/migrations/index.js'
import type { DB } from '../../src/db/tables.js'
import { permissionMap } from '../../src/modules/iam/permissions.js'
import { freshDatabase, tempDir, whileSchemasStay } from './app.js'

/** A fresh database as the release before migration `name` left it, for a test that fills it and then migrates it. */
export interface DatabaseBefore {
  database: Database
  /** The database's settings, to start an app on it once migrated. */
  config: Awaited<ReturnType<typeof freshDatabase>>['database']
  /** The PostgreSQL schema, or null. */
  schema: string | null
  /** Runs the migrations not run yet (`name`, and any later one that was left out). */
  migrateRest(): ReturnType<typeof migrate>
  /** An account of the older release, with the customer number and name `Old B.V.`. */
  insertAccount(): Promise<{ id: number; customer_number: number }>
  /** A user row of the older release in `accountId`: a main user (every permission) or a sub-user (none). */
  userRow(accountId: number, email: string, main: boolean): Insertable<DB['users']>
  /** Closes the connection (an app started on the database then has it alone). */
  disconnect(): Promise<void>
  /** Closes the connection (if still open), drops the database and its directory. */
  close(): Promise<void>
}

/** A fresh database of `dialect` migrated with every migration of the release but `name`. */
export async function databaseBefore(dialect: Dialect, name: string): Promise<DatabaseBefore> {
  const dir = tempDir()
  const fresh = await freshDatabase(dialect, dir)
  const database = openDatabase(fresh.database)
  const { db } = database
  const schema = fresh.database.dialect === 'postgres' ? (fresh.database.schema ?? null) : null
  const older = Object.fromEntries(Object.entries(migrations).filter(([n]) => n !== name))
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => older },
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  })
  const { error } = await whileSchemasStay(dialect, () => migrator.migrateToLatest())
  if (error) throw error
  const now = new Date().toISOString()
  let closed = false
  const disconnect = async () => {
    if (!closed) await database.close()
    closed = true
  }
  return {
    database,
    config: fresh.database,
    schema,
    migrateRest: () => whileSchemasStay(dialect, () => migrate(db, schema)),
    insertAccount: () =>
      db
        .insertInto('accounts')
        .values({ customer_number: 100001, name: 'Old B.V.', status: 'active', created_at: now })
        .returning(['id', 'customer_number'])
        .executeTakeFirstOrThrow(),
    userRow: (accountId, email, main) => ({
      account_id: accountId,
      username: email.toLowerCase(),
      email,
      firstname: 'F',
      lastname: 'L',
      password_hash: null,
      is_main_user: main ? 1 : 0,
      two_factor: 0,
      permissions: JSON.stringify(permissionMap(main)),
      created_at: now,
    }),
    disconnect,
    async close() {
      await disconnect()
      await fresh.drop()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}
