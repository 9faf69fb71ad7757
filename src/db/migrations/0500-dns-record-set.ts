import { sql } from 'kysely'
import type { AnyDb } from './helpers.js'
import { isPostgres } from './helpers.js'

export const kind = 'expand'

/**
 * PostgreSQL: a record set of a zone replaced by one record in one call, under the zone's row lock, so the lock is
 * held for the time the database takes and not for round trips to the application (the writes to one zone run
 * one after the other). The caller checked the record against the other types at its name; when those changed
 * since (`other_types`, sorted and comma-separated), nothing is written and the answer is false: read and
 * check again. With the records: the zone serial (as bumpSerial raises it) and the request's audit row (JSON).
 */
export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0].s
  const q = (name: string) => `"${schema.replace(/"/g, '""')}"."${name}"`
  await sql
    .raw(`
    create function ${q('dns_replace_record_set')}(
      account integer, domain integer, rtype text, rname text, rvalue text, rttl integer, now text,
      serial bigint, other_types text, audit json
    ) returns boolean language plpgsql as $f$
    begin
      perform 1 from ${q('domains')} where id = domain and account_id = account for no key update;
      if not found then return false; end if;
      if coalesce((select string_agg(distinct type collate "C", ',' order by type collate "C") from ${q('dns_records')}
                   where domain_id = domain and name = rname and type <> rtype), '') <> other_types then
        return false;
      end if;
      delete from ${q('dns_records')} where domain_id = domain and type = rtype and name = rname;
      insert into ${q('dns_records')} (domain_id, type, name, value, ttl, created_at)
        values (domain, rtype, rname, rvalue, rttl, now);
      update ${q('domains')}
        set zone_serial = case when zone_serial + 1 > serial then zone_serial + 1 else serial end, updated_at = now
        where id = domain;
      if audit is not null then
        insert into ${q('audit_log')} (account_id, user_id, key_prefix, ip, method, path, status, request_id, created_at)
          select a.account_id, a.user_id, a.key_prefix, a.ip, a.method, a.path, a.status, a.request_id, a.created_at
          from json_populate_record(null::${q('audit_log')}, audit) a;
      end if;
      return true;
    end $f$`)
    .execute(db)
}

export async function down(db: AnyDb): Promise<void> {
  if (isPostgres(db))
    await sql`drop function dns_replace_record_set(integer, integer, text, text, text, integer, text, bigint, text, json)`.execute(
      db,
    )
}
