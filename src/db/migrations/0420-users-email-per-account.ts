import { sql } from 'kysely'
import type { AnyDb } from './helpers.js'
import { isPostgres, withId, withUserColumns } from './helpers.js'

// It drops the global unique constraint on usernames, and names no expand: no code that does not know it runs on it.
export const kind = 'contract'

/**
 * A user's e-mail address (its lower-cased `username`) is unique within its account, no longer across accounts:
 * a global index let one tenant learn, by creating a user, that an address is in use in another account.
 *
 * PostgreSQL drops the column's unique constraint and adds a unique index on (account_id, username). SQLite cannot
 * drop a column constraint, so the table is rebuilt (foreign keys off meanwhile, so the keys and tickets that
 * point at users stay as they are) and checked before the constraints are turned on again.
 */
export async function up(db: AnyDb): Promise<void> {
  if (isPostgres(db)) {
    await db.schema.alterTable('users').dropConstraint('users_username_key').ifExists().execute()
  } else {
    await rebuildSqlite(db, false)
  }
  await db.schema
    .createIndex('users_account_username_idx')
    .unique()
    .on('users')
    .columns(['account_id', 'username'])
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('users_account_username_idx').ifExists().execute()
  if (isPostgres(db)) {
    await db.schema.alterTable('users').addUniqueConstraint('users_username_key', ['username']).execute()
  } else {
    await rebuildSqlite(db, true)
  }
}

async function rebuildSqlite(db: AnyDb, usernameUnique: boolean): Promise<void> {
  // Has no effect inside a transaction: SQLite migrations run outside one, this sets it for the rebuild.
  await sql`PRAGMA foreign_keys = OFF`.execute(db)
  try {
    await db.transaction().execute(async (trx) => {
      await withUserColumns(withId(trx, trx.schema.createTable('users_rebuilt')), usernameUnique).execute()
      const columns = [
        'id',
        'account_id',
        'username',
        'email',
        'firstname',
        'lastname',
        'password_hash',
        'is_main_user',
        'two_factor',
        'permissions',
        'created_at',
      ]
      await trx
        .insertInto('users_rebuilt')
        .columns(columns)
        .expression(trx.selectFrom('users').select(columns))
        .execute()
      // AUTOINCREMENT never reuses an id: the rebuilt table continues the old table's sequence.
      const seq = await trx.selectFrom('sqlite_sequence').select('seq').where('name', '=', 'users').executeTakeFirst()
      await trx.schema.dropTable('users').execute()
      await trx.schema.alterTable('users_rebuilt').renameTo('users').execute()
      if (seq) {
        await sql`delete from sqlite_sequence where name = 'users'`.execute(trx)
        await sql`insert into sqlite_sequence (name, seq) select 'users', max(${Number(seq.seq)}, coalesce(max(id), 0)) from users`.execute(
          trx,
        )
      }
      await trx.schema.createIndex('users_account_idx').on('users').column('account_id').execute()
      const broken = await sql<{ table: string }>`PRAGMA foreign_key_check`.execute(trx)
      if (broken.rows.length > 0) throw new Error(`Rebuilding users left ${broken.rows.length} broken foreign keys`)
    })
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db)
  }
}
