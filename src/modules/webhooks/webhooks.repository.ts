import { sql } from 'kysely'
import { iso } from '../../clock.js'
import type { Db } from '../../db/database.js'
import { insertJobIn } from '../../jobs/runner.js'
import { DELIVERY_JOB, DELIVERY_JOB_ATTEMPTS, DELIVERY_KIND } from './webhook-delivery-job.js'
import type { WebhookDelivery, WebhookEndpoint } from './webhooks.tables.js'

/** The enabled endpoints of an account, with their event lists and their owners' permissions (null: no owner). */
export const enabledEndpoints = async (db: Db, accountId: number) =>
  (
    await db
      .selectFrom('webhook_endpoints as w')
      .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'w.user_id').onRef('u.account_id', '=', 'w.account_id'))
      .select(['w.id', 'w.events', 'u.id as owner_id', 'u.is_main_user', 'u.permissions'])
      .where('w.account_id', '=', accountId)
      .where('w.enabled', '=', 1)
      .execute()
  ).map((r) => ({ id: r.id, events: r.events, owner: ownerOf(r) }))

// The owner of an endpoint as read through the left join on users (nulls: no owner).
const ownerOf = (r: { owner_id: number | null; is_main_user: number | null; permissions: string | null }) => ({
  userId: r.owner_id,
  isMainUser: r.is_main_user === null ? null : r.is_main_user === 1,
  permissions: r.permissions,
})

/** The customer number of an account (the `account` of an event's data). */
export const customerNumber = async (db: Db, accountId: number): Promise<number> =>
  (await db.selectFrom('accounts').select('customer_number').where('id', '=', accountId).executeTakeFirstOrThrow())
    .customer_number

/** Inserts an event; undefined when an event of its uid exists already. */
export const insertEvent = (
  db: Db,
  row: { account_id: number; uid: string; type: string; payload: string; reader_id: number | null; created_at: string },
) =>
  db
    .insertInto('webhook_events')
    .values(row)
    .onConflict((oc) => oc.column('uid').doNothing())
    .returning('id')
    .executeTakeFirst()

/** Queues an attempt of a delivery at `runAt`, in the caller's transaction. */
export const queueAttempt = (db: Db, accountId: number, deliveryId: number, runAt: Date, now: Date) =>
  insertJobIn(DELIVERY_KIND, { deliveryId }, { trx: db, accountId, runAt, now, maxAttempts: DELIVERY_JOB_ATTEMPTS })

/** A pending delivery of an event to an endpoint, and the job of its first attempt. */
export async function insertDelivery(
  db: Db,
  accountId: number,
  endpointId: number,
  eventId: number,
  at: Date,
): Promise<number> {
  const { id } = await db
    .insertInto('webhook_deliveries')
    .values({
      account_id: accountId,
      endpoint_id: endpointId,
      event_id: eventId,
      status: 'pending',
      attempts: 0,
      parked: 0,
      next_attempt_at: iso(at),
      created_at: iso(at),
      updated_at: iso(at),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await queueAttempt(db, accountId, id, at, at)
  return id
}

/** The endpoints of an account, oldest first. */
export const listEndpoints = (db: Db, accountId: number) =>
  db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

export const countEndpoints = async (db: Db, accountId: number): Promise<number> =>
  Number(
    (
      await db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).n,
  )

export const findEndpoint = (db: Db, accountId: number, id: number): Promise<WebhookEndpoint | undefined> =>
  db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()

export const insertEndpoint = (
  db: Db,
  row: Omit<
    WebhookEndpoint,
    'id' | 'disabled_reason' | 'previous_secret' | 'previous_secret_until' | 'last_success_at'
  >,
) => db.insertInto('webhook_endpoints').values(row).returning('id').executeTakeFirstOrThrow()

/** Changes columns of one endpoint of an account. */
export const updateEndpoint = (
  db: Db,
  accountId: number,
  id: number,
  changes: Partial<Omit<WebhookEndpoint, 'id' | 'account_id' | 'created_at'>>,
) =>
  db
    .updateTable('webhook_endpoints')
    .set(changes)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()

export const deleteEndpoint = async (db: Db, accountId: number, id: number): Promise<void> => {
  // Both dialects cascade only with foreign keys enforced; the rows go explicitly.
  await db.deleteFrom('webhook_deliveries').where('account_id', '=', accountId).where('endpoint_id', '=', id).execute()
  await db.deleteFrom('webhook_endpoints').where('account_id', '=', accountId).where('id', '=', id).execute()
}

/** A delivery with its event's id, type and time. */
export interface DeliveryRow extends WebhookDelivery {
  event_uid: string
  event_type: string
}

const deliveries = (db: Db) =>
  db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select(['e.uid as event_uid', 'e.type as event_type'])

/** The most recent deliveries of an endpoint, newest first. */
export const listDeliveries = (db: Db, accountId: number, endpointId: number, limit: number) =>
  deliveries(db)
    .where('d.account_id', '=', accountId)
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute() as Promise<DeliveryRow[]>

export const findDelivery = (db: Db, accountId: number, endpointId: number, id: number) =>
  deliveries(db)
    .where('d.account_id', '=', accountId)
    .where('d.endpoint_id', '=', endpointId)
    .where('d.id', '=', id)
    .executeTakeFirst() as Promise<DeliveryRow | undefined>

/** One delivery by id, whatever its account (the delivery job's own view). */
export const deliveryById = (db: Db, id: number) =>
  db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst()

/** The endpoint of a delivery with its owner's permissions, null without owner (the delivery job's own view). */
export const endpointById = async (db: Db, id: number) => {
  const row = await db
    .selectFrom('webhook_endpoints as w')
    .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'w.user_id').onRef('u.account_id', '=', 'w.account_id'))
    .selectAll('w')
    .select(['u.id as owner_id', 'u.is_main_user', 'u.permissions as owner_permissions'])
    .where('w.id', '=', id)
    .executeTakeFirst()
  if (!row) return undefined
  const { owner_id, is_main_user, owner_permissions, ...endpoint } = row
  return {
    endpoint: endpoint as WebhookEndpoint,
    owner: ownerOf({ owner_id, is_main_user, permissions: owner_permissions }),
  }
}

export const eventById = (db: Db, id: number) =>
  db.selectFrom('webhook_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow()

/**
 * Takes the row locks of the account's endpoints (PostgreSQL) so concurrent claims for one account, and so for each
 * of its endpoints, are counted one at a time.
 */
export const lockAccount = (db: Db, accountId: number) =>
  db
    .updateTable('webhook_endpoints')
    .set({ updated_at: sql<string>`updated_at` })
    .where('account_id', '=', accountId)
    .execute()

/**
 * The account's parked delivery that waits longest, if any is due at `now` and its endpoint has fewer than
 * `endpointLimit` attempts in flight.
 */
export const oldestParked = (db: Db, accountId: number, now: string, endpointLimit: number) =>
  db
    .selectFrom('webhook_deliveries as d')
    .select('d.id')
    .where('d.account_id', '=', accountId)
    .where('d.parked', '=', 1)
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', now)
    .where((eb) =>
      eb(
        eb
          .selectFrom('webhook_deliveries as s')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('s.endpoint_id', '=', 'd.endpoint_id')
          .where('s.status', '=', 'sending')
          .where('s.locked_until', '>', now),
        '<',
        endpointLimit,
      ),
    )
    .orderBy('d.next_attempt_at')
    .orderBy('d.id')
    .limit(1)
    .executeTakeFirst()

/** Accounts with a delivery parked since before `before` (the hourly safety net after a crash). */
export const accountsParkedSince = async (db: Db, before: string): Promise<{ account_id: number }[]> =>
  db
    .selectFrom('webhook_deliveries')
    .select('account_id')
    .distinct()
    .where('parked', '=', 1)
    .where('status', '=', 'pending')
    .where('updated_at', '<', before)
    .execute()

/** How many attempts are in flight at `now` to an endpoint or (`account`) to the endpoints of an account. */
export const inFlight = async (db: Db, of: { endpoint: number } | { account: number }, now: string): Promise<number> =>
  Number(
    (
      await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('endpoint' in of ? 'endpoint_id' : 'account_id', '=', 'endpoint' in of ? of.endpoint : of.account)
        .where('status', '=', 'sending')
        .where('locked_until', '>', now)
        .executeTakeFirstOrThrow()
    ).n,
  )

/** Fails a delivery still waiting for or in an attempt (its job was quarantined); the others are left as they are. */
export const failUnfinished = (db: Db, id: number, reason: string, now: string) =>
  db
    .updateTable('webhook_deliveries')
    .set({
      status: 'failed',
      parked: 0,
      next_attempt_at: null,
      locked_until: null,
      last_error: reason,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'sending'])
    .executeTakeFirst()

/** Changes columns of one delivery. */
export const updateDelivery = (
  db: Db,
  id: number,
  changes: Partial<Omit<WebhookDelivery, 'id' | 'account_id' | 'endpoint_id' | 'event_id' | 'created_at'>>,
) => db.updateTable('webhook_deliveries').set(changes).where('id', '=', id).executeTakeFirst()

/** The id of the account with this customer number. */
export const accountIdOf = async (db: Db, customerNumber: number): Promise<number | undefined> =>
  (await db.selectFrom('accounts').select('id').where('customer_number', '=', customerNumber).executeTakeFirst())?.id

/** The main user's address of an account, for notices. */
export const mainUserEmail = async (db: Db, accountId: number): Promise<string | null> =>
  (
    await db
      .selectFrom('users')
      .select('email')
      .where('account_id', '=', accountId)
      .where('is_main_user', '=', 1)
      .executeTakeFirst()
  )?.email ?? null

/** What the operator filters deliveries by. */
export interface DeliveryFilter {
  status?: WebhookDelivery['status']
  accountId?: number
}

const filtered = (db: Db, f: DeliveryFilter) => {
  let q = deliveries(db)
  if (f.status) q = q.where('d.status', '=', f.status)
  if (f.accountId !== undefined) q = q.where('d.account_id', '=', f.accountId)
  return q
}

/** Deliveries of every account (the operator's view), newest first. */
export const adminListDeliveries = (db: Db, f: DeliveryFilter, limit: number, offset: number) =>
  filtered(db, f).orderBy('d.id', 'desc').limit(limit).offset(offset).execute() as Promise<DeliveryRow[]>

export const adminCountDeliveries = async (db: Db, f: DeliveryFilter): Promise<number> =>
  Number(
    (
      await filtered(db, f)
        .clearSelect()
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

/** One delivery of any account with its event (the operator's view). */
export const adminFindDelivery = (db: Db, id: number) =>
  deliveries(db).where('d.id', '=', id).executeTakeFirst() as Promise<DeliveryRow | undefined>

/** The JSON body an event is sent with. */
export const eventPayload = async (db: Db, eventId: number): Promise<string | undefined> =>
  (await db.selectFrom('webhook_events').select('payload').where('id', '=', eventId).executeTakeFirst())?.payload

/** Pending deliveries, endpoints retrying or disabled by hostapi, and the time of the oldest pending delivery. */
export async function deliveryStats(
  db: Db,
): Promise<{ pending: number; failing: number; disabled: number; oldestPending: string | null }> {
  const pending = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('status', 'in', ['pending', 'sending'])
    .executeTakeFirstOrThrow()
  const failing = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.count<number>('endpoint_id').distinct().as('n'))
    .where('status', 'in', ['pending', 'sending'])
    .where('attempts', '>', 0)
    .where('last_error', 'is not', null)
    .executeTakeFirstOrThrow()
  const disabled = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('enabled', '=', 0)
    .where('disabled_reason', 'is not', null)
    .executeTakeFirstOrThrow()
  return {
    pending: Number(pending.n),
    failing: Number(failing.n),
    disabled: Number(disabled.n),
    oldestPending: (pending.oldest as string | null) ?? null,
  }
}

/** Makes every queued delivery attempt due at `now` (the sandbox's flush); returns how many. */
export const makeAttemptsDue = async (db: Db, now: Date): Promise<number> => {
  const r = await db
    .updateTable('jobs')
    .set({ run_at: iso(now) })
    .where('kind', '=', DELIVERY_JOB)
    .where('status', '=', 'queued')
    .where('run_at', '>', iso(now))
    .executeTakeFirst()
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: iso(now) })
    .where('status', '=', 'pending')
    .where('next_attempt_at', '>', iso(now))
    .execute()
  return Number(r.numUpdatedRows)
}

/** Accounts with an enabled endpoint: the only ones a scan for events needs to look at. */
const listening = (db: Db) => db.selectFrom('webhook_endpoints').select('account_id').where('enabled', '=', 1)

/** Domains of listening accounts renewed or ended after `after` and at the latest on `until` (YYYY-MM-DD). */
export const domainsRenewedBetween = (db: Db, after: string, until: string) =>
  db
    .selectFrom('domains')
    .select(['id', 'account_id', 'name', 'status', 'renewal_date'])
    .where('renewal_date', '>', after)
    .where('renewal_date', '<=', until)
    .where('account_id', 'in', listening(db))
    .execute()

/** Issued certificates of listening accounts that expire after `after` and at the latest at `until` (ISO). */
export const certificatesExpiringBetween = (db: Db, after: string, until: string) =>
  db
    .selectFrom('certificates')
    .select(['id', 'account_id', 'common_name', 'status', 'valid_until'])
    .where('status', '=', 'ACT')
    .where('valid_until', '>', after)
    .where('valid_until', '<=', until)
    .where('account_id', 'in', listening(db))
    .execute()

/** Deletes deliveries finished before `before` and the events left without a delivery; returns how many deliveries. */
export async function pruneDelivered(db: Db, before: string): Promise<number> {
  const r = await db
    .deleteFrom('webhook_deliveries')
    .where('status', 'in', ['succeeded', 'failed'])
    .where('updated_at', '<', before)
    .executeTakeFirst()
  await db
    .deleteFrom('webhook_events')
    .where('created_at', '<', before)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'webhook_events.id')),
      ),
    )
    .execute()
  return Number(r.numDeletedRows)
}
