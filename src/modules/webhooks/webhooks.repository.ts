import { sql } from 'kysely'
import { iso } from '../../clock.js'
import type { Db } from '../../db/database.js'
import { insertJob } from '../../jobs/jobs.repository.js'
import type { WebhookDelivery, WebhookEndpoint } from './webhooks.tables.js'

// The job kind is repeated here (not imported from webhook-events.ts, which imports this file).
const DELIVERY_JOB = 'webhooks.deliver'
// A delivery job is run again after a crash (its lease runs out); its own attempts are counted on the delivery.
const DELIVERY_JOB_ATTEMPTS = 5

/** The enabled endpoints of an account, with their event lists. */
export const enabledEndpoints = (db: Db, accountId: number) =>
  db
    .selectFrom('webhook_endpoints')
    .select(['id', 'events'])
    .where('account_id', '=', accountId)
    .where('enabled', '=', 1)
    .execute()

/** The customer number of an account (the `account` of an event's data). */
export const customerNumber = async (db: Db, accountId: number): Promise<number> =>
  (await db.selectFrom('accounts').select('customer_number').where('id', '=', accountId).executeTakeFirstOrThrow())
    .customer_number

export const insertEvent = (
  db: Db,
  row: { account_id: number; uid: string; type: string; payload: string; created_at: string },
) => db.insertInto('webhook_events').values(row).returning('id').executeTakeFirstOrThrow()

/** Queues an attempt of a delivery at `runAt`, in the caller's transaction. */
export const queueAttempt = (db: Db, accountId: number, deliveryId: number, runAt: Date, now: Date) =>
  insertJob(db, {
    kind: DELIVERY_JOB,
    account_id: accountId,
    payload: JSON.stringify({ deliveryId }),
    max_attempts: DELIVERY_JOB_ATTEMPTS,
    run_at: iso(runAt),
    created_at: iso(now),
  })

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

/** The endpoint of a delivery (the delivery job's own view). */
export const endpointById = (db: Db, id: number) =>
  db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()

export const eventById = (db: Db, id: number) =>
  db.selectFrom('webhook_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow()

/** Takes the endpoint's row lock (PostgreSQL) so concurrent claims for one endpoint are counted one at a time. */
export const lockEndpoint = (db: Db, id: number) =>
  db.updateTable('webhook_endpoints').set({ updated_at: sql<string>`updated_at` }).where('id', '=', id).execute()

/** How many attempts to an endpoint are in flight at `now`. */
export const inFlight = async (db: Db, endpointId: number, now: string): Promise<number> =>
  Number(
    (
      await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', 'sending')
        .where('locked_until', '>', now)
        .executeTakeFirstOrThrow()
    ).n,
  )

/** Changes columns of one delivery. */
export const updateDelivery = (
  db: Db,
  id: number,
  changes: Partial<Omit<WebhookDelivery, 'id' | 'account_id' | 'endpoint_id' | 'event_id' | 'created_at'>>,
) => db.updateTable('webhook_deliveries').set(changes).where('id', '=', id).executeTakeFirst()

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

/** Every endpoint's sealed secrets, for the secret key check and rotation. */
export const allSecrets = (db: Db) =>
  db.selectFrom('webhook_endpoints').select(['id', 'account_id', 'secret', 'previous_secret']).execute()
