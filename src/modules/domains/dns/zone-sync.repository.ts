import { sql } from 'kysely'
import type { Db } from '../../../db/database.js'
import { SERVED_DOMAIN_STATUSES } from './zone-source.repository.js'

// The push state of the zones a pushing DNS driver serves. These rows are the operator's view across accounts:
// they are written by the push queue and read by the admin API, never by a customer's request.

/** Records that a change of `zone` was handed to the push queue at `now`. */
export async function markChanged(db: Db, zone: string, now: string): Promise<void> {
  await db
    .insertInto('dns_zone_sync')
    .values({ zone, changed_at: now, pending_since: now })
    .onConflict((oc) =>
      oc.column('zone').doUpdateSet({
        changed_at: now,
        pending_since: sql<string>`coalesce(dns_zone_sync.pending_since, ${now})`,
      }),
    )
    .execute()
}

/**
 * Records a push of `zone` with the zone at `serial` as done; `settled`: no other push of the zone is queued or
 * running, so no change waits any more.
 */
export async function markPushed(db: Db, zone: string, serial: number, settled: boolean, now: string): Promise<void> {
  await db
    .insertInto('dns_zone_sync')
    .values({ zone, pushed_serial: serial, pushed_at: now, pending_since: settled ? null : now })
    .onConflict((oc) =>
      oc.column('zone').doUpdateSet({
        pushed_serial: sql<number>`case when dns_zone_sync.pushed_serial > ${serial} then dns_zone_sync.pushed_serial else ${serial} end`,
        pushed_at: now,
        last_error: null,
        last_error_at: null,
        ...(settled ? { pending_since: null } : {}),
      }),
    )
    .execute()
}

/** Records why a push of `zone` failed. */
export async function markFailed(db: Db, zone: string, error: string, now: string): Promise<void> {
  await db
    .insertInto('dns_zone_sync')
    .values({ zone, last_error: error, last_error_at: now, pending_since: now })
    .onConflict((oc) =>
      oc.column('zone').doUpdateSet({
        last_error: error,
        last_error_at: now,
        pending_since: sql<string>`coalesce(dns_zone_sync.pending_since, ${now})`,
      }),
    )
    .execute()
}

/** Forgets a zone that is no longer served and was removed from the DNS server. */
export async function forget(db: Db, zone: string): Promise<void> {
  await db.deleteFrom('dns_zone_sync').where('zone', '=', zone).execute()
}

/** The push state of the served zones (those named, or every one), with the serial each has now. */
export function listSync(db: Db, zones: string[] | undefined, limit: number) {
  let q = db
    .selectFrom('domains')
    .leftJoin('dns_zone_sync', 'dns_zone_sync.zone', 'domains.name')
    .select([
      'domains.name as zone',
      'domains.zone_serial as serial',
      'dns_zone_sync.pushed_serial',
      'dns_zone_sync.pushed_at',
      'dns_zone_sync.pending_since',
      'dns_zone_sync.last_error',
      'dns_zone_sync.last_error_at',
    ])
    .where('domains.status', 'in', [...SERVED_DOMAIN_STATUSES])
  if (zones) q = q.where('domains.name', 'in', zones.length ? zones : [''])
  return q.orderBy('domains.name').limit(limit).execute()
}
