import type { Insertable, Kysely } from 'kysely'
import { compiledOnce } from '../../db/compiled.js'
import type {
  HvBackupsTable,
  HvInstance,
  HvInstancesTable,
  HvOperationsTable,
  HypervisorSimTables,
} from './builtin.tables.js'

/** The built-in hypervisor's handle: its own tables alone (`db` or a transaction on it). */
export type HvDb = Kysely<HypervisorSimTables>

/** The columns of an instance a change may set. */
export type InstanceChanges = Partial<Omit<HvInstance, 'id'>>

/** Stores a new instance; resolves with its id. */
export const insertInstance = async (db: HvDb, row: Insertable<HvInstancesTable>): Promise<number> =>
  (await db.insertInto('hv_instances').values(row).returning('id').executeTakeFirstOrThrow()).id

/** The instance `id` unless it was destroyed. */
export const findLiveInstance = (db: HvDb, id: number) =>
  db.selectFrom('hv_instances').selectAll().where('id', '=', id).where('destroyed', '=', 0).executeTakeFirst()

/** Sets columns of an instance (with its `updated_at`). */
export const updateInstance = (db: HvDb, id: number, changes: InstanceChanges, now: string) =>
  db
    .updateTable('hv_instances')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .execute()

/** Marks an instance destroyed, deleting its backups and unrouting its floating addresses; call in a transaction. */
export async function destroyInstance(trx: HvDb, id: number, now: string): Promise<void> {
  await trx.deleteFrom('hv_backups').where('instance_id', '=', id).execute()
  await trx.updateTable('hv_floating_ips').set({ instance_id: null }).where('instance_id', '=', id).execute()
  await updateInstance(trx, id, { destroyed: 1, power: 'stopped' }, now)
}

/** How many live instances each host runs (hosts without any are left out). */
export const hostLoads = (db: HvDb) =>
  db
    .selectFrom('hv_instances')
    .select(['host', (eb) => eb.fn.countAll<number>().as('n')])
    .where('destroyed', '=', 0)
    .groupBy('host')
    .execute()

/** The failure injected into the next operation of an instance, if any. */
export const failNextOf = async (db: HvDb, instanceId: number): Promise<string | null> =>
  (await db.selectFrom('hv_instances').select('fail_next').where('id', '=', instanceId).executeTakeFirstOrThrow())
    .fail_next

/** Stores a new operation; resolves with its id. */
export const insertOperation = async (db: HvDb, row: Insertable<HvOperationsTable>): Promise<number> =>
  (await db.insertInto('hv_operations').values(row).returning('id').executeTakeFirstOrThrow()).id

/** The operation `id`, if there is one. */
export const findOperation = (db: HvDb, id: number) =>
  db.selectFrom('hv_operations').selectAll().where('id', '=', id).executeTakeFirst()

/** Ends a running operation with `status`; false when it was not running any more (another waiter ended it). */
export const endOperation = async (
  db: HvDb,
  id: number,
  end: { status: 'done' | 'failed'; error: string | null; now: string },
): Promise<boolean> =>
  Number(
    (
      await db
        .updateTable('hv_operations')
        .set({ status: end.status, error: end.error, finished_at: end.now })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .executeTakeFirst()
    ).numUpdatedRows,
  ) === 1

/** Whether the floating address `ip` is routed to the instance. */
export const floatingIpRoutedTo = async (db: HvDb, ip: string, instanceId: number): Promise<boolean> =>
  (await db
    .selectFrom('hv_floating_ips')
    .select('id')
    .where('ip', '=', ip)
    .where('instance_id', '=', instanceId)
    .executeTakeFirst()) !== undefined

/** How many floating addresses are reserved. */
export const countFloatingIps = async (db: HvDb): Promise<number> =>
  Number(
    (
      await db
        .selectFrom('hv_floating_ips')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

/** Reserves a floating address; an address reserved already throws the unique violation. */
export const insertFloatingIp = (db: HvDb, row: { ip: string; location: string; now: string }) =>
  db
    .insertInto('hv_floating_ips')
    .values({ ip: row.ip, location: row.location, instance_id: null, created_at: row.now })
    .execute()

/** Routes a floating address to an instance (null: to none); false when there is no such address. */
export const routeFloatingIp = async (db: HvDb, ip: string, instanceId: number | null): Promise<boolean> =>
  Number(
    (await db.updateTable('hv_floating_ips').set({ instance_id: instanceId }).where('ip', '=', ip).executeTakeFirst())
      .numUpdatedRows,
  ) === 1

/** Releases a floating address. */
export const deleteFloatingIp = (db: HvDb, ip: string) =>
  db.deleteFrom('hv_floating_ips').where('ip', '=', ip).execute()

/** The backup `id` of an instance, if it has it. */
export const findBackup = (db: HvDb, instanceId: number, id: number) =>
  db.selectFrom('hv_backups').selectAll().where('id', '=', id).where('instance_id', '=', instanceId).executeTakeFirst()

/** Stores backups unless one of the same instance, type and token exists; resolves with how many were stored. */
export const insertBackupsIfAbsent = async (db: HvDb, rows: Insertable<HvBackupsTable>[]): Promise<number> =>
  Number(
    (
      await db
        .insertInto('hv_backups')
        .values(rows)
        .onConflict((oc) => oc.columns(['instance_id', 'type', 'date_internal']).doNothing())
        .executeTakeFirst()
    ).numInsertedOrUpdatedRows ?? 0,
  )

/** Deletes the incremental backups of an instance but its newest `keep`. */
export const pruneIncrementals = (db: HvDb, instanceId: number, keep: number) =>
  db
    .deleteFrom('hv_backups')
    .where('instance_id', '=', instanceId)
    .where('type', '=', 'incremental')
    .where('id', 'not in', (sub) =>
      sub
        .selectFrom('hv_backups')
        .select('id')
        .where('instance_id', '=', instanceId)
        .where('type', '=', 'incremental')
        .orderBy('created_at', 'desc')
        .limit(keep),
    )
    .execute()

/**
 * A live instance's columns the nightlies depend on, with its backups newest first (one row per backup; one row
 * with the backup columns null when it has none; no row when there is no such live instance): one statement.
 */
export const instanceBackups = (db: HvDb, instanceId: number) => backupsOf(db, undefined, [instanceId])

const backupsOf = compiledOnce((db: HvDb, _shape: undefined, [instanceId]: [number]) =>
  db
    .selectFrom('hv_instances as i')
    .leftJoin('hv_backups as b', 'b.instance_id', 'i.id')
    .select([
      'i.id as instanceId',
      'i.created_at as instanceCreatedAt',
      'i.image_id as instanceImageId',
      'b.id',
      'b.type',
      'b.date_internal',
      'b.created_at',
      'b.size_mb',
    ])
    .where('i.id', '=', instanceId)
    .where('i.destroyed', '=', 0)
    .orderBy('b.created_at', 'desc')
    .orderBy('b.id', 'desc'),
)

/** The image the instance runs now. */
export const imageOf = async (db: HvDb, instanceId: number): Promise<string> =>
  (await db.selectFrom('hv_instances').select('image_id').where('id', '=', instanceId).executeTakeFirstOrThrow())
    .image_id

/** The image a backup was taken of, if the backup exists. */
export const backupImage = async (db: HvDb, id: number): Promise<string | undefined> =>
  (await db.selectFrom('hv_backups').select('image_id').where('id', '=', id).executeTakeFirst())?.image_id
