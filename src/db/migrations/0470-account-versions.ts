import { sql } from 'kysely'
import type { AnyDb } from './helpers.js'
import { isPostgres } from './helpers.js'

export const kind = 'expand'

/**
 * The tables whose rows the cacheable answers show (domains with their records and contact handles, tickets with
 * their thread, VPS), each with how a row finds its account: its own `account_id`, or its parent's.
 */
const WATCHED = [
  { table: 'domains', parent: null },
  { table: 'contact_profiles', parent: null },
  { table: 'tickets', parent: null },
  { table: 'vps', parent: null },
  { table: 'dns_records', parent: { table: 'domains', key: 'domain_id' } },
  { table: 'ticket_messages', parent: { table: 'tickets', key: 'ticket_id' } },
] as const

/**
 * A data version per account, for the response cache on PostgreSQL (SQLite has a cheap global one and leaves this
 * table empty). On PostgreSQL a trigger on every watched table sets the version of each account a write touches
 * to the writing transaction's id, in that transaction: whatever makes the write (a request, a job, the admin API
 * or CLI, another process), a reader sees the new data and the new version at the same commit. The triggers are
 * deferred to the commit, so the version row is locked last in every transaction and for the shortest time, and
 * a transaction writes it once per account (a transaction-local setting remembers the last account and parent).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('account_versions')
    .addColumn('account_id', 'integer', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute()
  if (!isPostgres(db)) return
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0].s
  const q = (name: string) => `"${schema.replace(/"/g, '""')}"."${name}"`
  await sql
    .raw(`
    create function ${q('account_version_bump')}(account integer) returns void language plpgsql as $f$
    begin
      if account is null or current_setting('hostapi.version_account', true) = account::text then return; end if;
      insert into ${q('account_versions')} as v (account_id, version)
        values (account, pg_current_xact_id()::text::bigint)
        on conflict (account_id) do update set version = excluded.version where v.version <> excluded.version;
      perform set_config('hostapi.version_account', account::text, true);
    end $f$`)
    .execute(db)
  await sql
    .raw(`
    create function ${q('account_version_row')}() returns trigger language plpgsql as $f$
    begin
      if tg_op <> 'INSERT' then perform ${q('account_version_bump')}(old.account_id); end if;
      if tg_op <> 'DELETE' then perform ${q('account_version_bump')}(new.account_id); end if;
      return null;
    end $f$`)
    .execute(db)
  for (const { table, parent } of WATCHED) {
    let fn = 'account_version_row'
    if (parent) {
      fn = `account_version_${table}`
      const seen = `'${table}:' || r.${parent.key}`
      await sql
        .raw(`
        create function ${q(fn)}() returns trigger language plpgsql as $f$
        declare r record;
        begin
          for r in select * from (values (case when tg_op <> 'INSERT' then old.${parent.key} end),
                                         (case when tg_op <> 'DELETE' then new.${parent.key} end)) as x(${parent.key})
          loop
            continue when r.${parent.key} is null
              or current_setting('hostapi.version_parent', true) = ${seen};
            perform ${q('account_version_bump')}(
              (select account_id from ${q(parent.table)} where id = r.${parent.key}));
            perform set_config('hostapi.version_parent', ${seen}, true);
          end loop;
          return null;
        end $f$`)
        .execute(db)
    }
    await sql
      .raw(`
      create constraint trigger account_version after insert or update or delete on ${q(table)}
        deferrable initially deferred for each row execute function ${q(fn)}()`)
      .execute(db)
  }
}

export async function down(db: AnyDb): Promise<void> {
  if (isPostgres(db)) {
    for (const { table, parent } of WATCHED) {
      await sql.raw(`drop trigger account_version on "${table}"`).execute(db)
      if (parent) await sql.raw(`drop function account_version_${table}()`).execute(db)
    }
    await sql`drop function account_version_row()`.execute(db)
    await sql`drop function account_version_bump(integer)`.execute(db)
  }
  await db.schema.dropTable('account_versions').execute()
}
