import {
  PostgresAdapter,
  type ColumnDefinitionBuilder,
  type CreateTableBuilder,
  type Kysely,
  type Migration,
} from 'kysely'

/** The database as migrations see it: untyped, since they never import application types. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against every past schema, which no type describes
export type AnyDb = Kysely<any>

/**
 * A migration file: `up`, `down`, and its kind. Migrations follow expand/contract, so that the code of release N
 * runs on the schema of release N+1 (rolling upgrades, rollback of the code):
 * - `expand` adds (tables, columns with a default or nullable, indexes, functions); code that does not know it
 *   runs on it.
 * - `contract` drops, renames or narrows. It names in `contracts` the expand migration, shipped in an earlier
 *   release, whose code no longer uses what this removes: an instance that knows that expand runs on it, an older
 *   one refuses to start. A contract without `contracts` stops every instance that does not know it.
 */
export type MigrationModule = Migration &
  ({ readonly kind: 'expand' } | { readonly kind: 'contract'; readonly contracts?: string })

export const isPostgres = (db: AnyDb): boolean => db.getExecutor().adapter instanceof PostgresAdapter

/** Adds an auto-incrementing integer primary key `id` in the form each dialect wants. */
export function withId<T extends string>(db: AnyDb, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  return isPostgres(db)
    ? table.addColumn('id', 'serial', (c: ColumnDefinitionBuilder) => c.primaryKey())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement())
}

/**
 * The columns of the `users` table as migration 0001 created them; `usernameUnique` adds the global unique
 * constraint on `username` that 0420 replaced by one per account. Shared by 0001 and 0420's SQLite rebuild.
 */
export function withUserColumns<T extends string>(table: CreateTableBuilder<T, 'id'>, usernameUnique: boolean) {
  return table
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('username', 'text', (c) => (usernameUnique ? c.notNull().unique() : c.notNull()))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('firstname', 'text', (c) => c.notNull())
    .addColumn('lastname', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('is_main_user', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('two_factor', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
}
