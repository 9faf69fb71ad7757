import { sql } from 'kysely'
import type { AnyDb } from './helpers.js'
import { isPostgres } from './helpers.js'

export const kind = 'expand'

/**
 * PostgreSQL: dns_replace_record_set (migration 0500) for a zone named, not numbered, in one round trip with no read
 * before it: the caller checked the record against the records it read at the name earlier. Nothing is written, and
 * the answer is false, when the account has no such zone, when an enabled webhook endpoint of the account listens
 * (the change's event must commit with it, in a transaction of the caller), or when the other types at the name are
 * no longer `other_types`: the caller then reads and checks again. dns_replace_record_sets makes several such
 * calls, of concurrent requests, in one round trip and one commit.
 */
export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0].s
  const q = (name: string) => `"${schema.replace(/"/g, '""')}"."${name}"`
  await sql
    .raw(`
    create function ${q('dns_replace_record_set_at')}(
      account integer, zone text, rtype text, rname text, rvalue text, rttl integer, now text,
      serial bigint, other_types text, audit json
    ) returns boolean language plpgsql as $f$
    declare
      domain integer;
    begin
      select id into domain from ${q('domains')} where account_id = account and name = zone;
      if not found then return false; end if;
      if exists (select 1 from ${q('webhook_endpoints')} where account_id = account and enabled = 1) then
        return false;
      end if;
      return ${q('dns_replace_record_set')}(account, domain, rtype, rname, rvalue, rttl, now, serial, other_types, audit);
    end $f$`)
    .execute(db)
  // The writes of several requests in one call and one commit (JSON objects with the arguments above by name), in
  // the order given; the answers in that order. The caller orders them by account and zone, so that two such calls
  // take the zones' row locks (and, at the commit, the accounts' version rows) in one order.
  await sql
    .raw(`
    create function ${q('dns_replace_record_sets')}(changes json) returns boolean[] language plpgsql as $f$
    declare
      c json;
      answers boolean[] := '{}';
    begin
      for c in select value from json_array_elements(changes) loop
        answers := answers || ${q('dns_replace_record_set_at')}((c->>'account')::integer, c->>'zone', c->>'type',
          c->>'name', c->>'value', (c->>'ttl')::integer, c->>'now', (c->>'serial')::bigint, c->>'others',
          (c->>'audit')::json);
      end loop;
      return answers;
    end $f$`)
    .execute(db)
}

export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return
  await sql`drop function dns_replace_record_sets(json)`.execute(db)
  await sql`drop function dns_replace_record_set_at(integer, text, text, text, text, integer, text, bigint, text, json)`.execute(
    db,
  )
}
