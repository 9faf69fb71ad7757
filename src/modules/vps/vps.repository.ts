import { sql, type Insertable, type Updateable } from 'kysely'
import type { Db } from '../../db/database.js'
import { compiledOnce } from '../../db/compiled.js'
import { jsonColumns, type Decoded } from '../../db/json-columns.js'
import { jsonArray, jsonInteger, jsonItems, jsonObject, jsonString } from '../../db/json-text.js'
import { asJsonText, type JsonText } from '../../lib/json-text.js'
import type { FirewallConfig } from '../../drivers/hypervisor/hypervisor.js'
import type { VpsRow, VpsSshKeysTable, VpsSubnetsTable, VpsTable, VpsTaskRow, VpsTasksTable } from './vps.tables.js'

/** The JSON columns of a VPS row, decoded. */
export interface VpsJson {
  firewall: FirewallConfig
  reverse_dns: Record<string, string>
}

/** The JSON columns of a VPS task row, decoded. */
export interface VpsTaskJson {
  params: Record<string, unknown>
}

/** A VPS with its JSON columns decoded. */
export type Vps = Decoded<VpsRow, VpsJson>
/** A VPS task with its params decoded. */
export type VpsTask = Decoded<VpsTaskRow, VpsTaskJson>

/** Decodes the JSON columns of (part of) a VPS row. */
export const decodeVps = jsonColumns<VpsJson>('firewall', 'reverse_dns')
/** Decodes the params of (part of) a VPS task row. */
export const decodeTask = jsonColumns<VpsTaskJson>('params')

// Instances; reads answer decoded rows.

export const listVps = async (db: Db, accountId: number) =>
  (await db.selectFrom('vps').selectAll().where('account_id', '=', accountId).orderBy('id').execute()).map(decodeVps)

const vpsList = compiledOnce((db: Db, _shape: undefined, [accountId]: [number]) => {
  const item = jsonObject([
    ['id', jsonInteger(sql.ref('id'))],
    ['name', jsonString(db, sql.ref('name'))],
    ['hostname', jsonString(db, sql.ref('hostname'))],
    ['status', jsonString(db, sql.ref('status'))],
    ['product', jsonString(db, sql.ref('product_id'))],
    ['location', jsonString(db, sql.ref('location'))],
    ['ipv4', jsonString(db, sql.ref('ipv4'))],
    ['ipv6', jsonString(db, sql.ref('ipv6'))],
    ['created', jsonString(db, sql`replace(substr(${sql.ref('created_at')}, 1, 16), 'T', ' ')`)],
  ])
  return db
    .selectFrom('vps')
    .select(sql<string>`${jsonArray(jsonItems(item, sql.ref('id')))}`.as('items'))
    .where('account_id', '=', accountId)
})

/**
 * The `vps` list of `GET /vps` as JSON text built by the database (src/db/json-text.ts), in one statement: the
 * account's VPS by id. `created_at` is stored as Date.toISOString writes it (UTC) and shown as `YYYY-MM-DD HH:MM`,
 * its first 16 characters with the `T` a space.
 */
export async function listVpsJson(db: Db, accountId: number): Promise<JsonText> {
  const [row] = await vpsList(db, undefined, [accountId])
  return asJsonText(row.items)
}

const oneVps = compiledOnce((db: Db, _shape: undefined, [accountId, id]: [number, number]) =>
  db.selectFrom('vps').selectAll().where('account_id', '=', accountId).where('id', '=', id),
)

export const findVps = async (db: Db, accountId: number, id: number) => {
  const row = (await oneVps(db, undefined, [accountId, id])).at(0)
  return row && decodeVps(row)
}

/** The VPS provisioned for an order item, if any. */
export const findVpsByOrderItem = (db: Db, accountId: number, orderItemId: number) =>
  db
    .selectFrom('vps')
    .select(['id'])
    .where('account_id', '=', accountId)
    .where('order_item_id', '=', orderItemId)
    .executeTakeFirst()

/** A VPS by id for the job handlers, which act for whichever account owns it. */
export const findVpsForJob = async (db: Db, id: number) => {
  const row = await db.selectFrom('vps').selectAll().where('id', '=', id).executeTakeFirst()
  return row && decodeVps(row)
}

export const insertVps = (db: Db, row: Insertable<VpsTable>) =>
  db.insertInto('vps').values(row).returning('id').executeTakeFirstOrThrow()

export const updateVps = (db: Db, accountId: number, id: number, changes: Updateable<VpsTable>) =>
  db.updateTable('vps').set(changes).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()

/** Gives the VPS to `taskId` when no task holds it; false when another task does. */
export async function holdVps(
  db: Db,
  accountId: number,
  id: number,
  taskId: number,
  status: string,
  now: string,
): Promise<boolean> {
  const r = await db
    .updateTable('vps')
    .set({ task_id: taskId, status, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('task_id', 'is', null)
    .executeTakeFirst()
  return Number(r.numUpdatedRows) === 1
}

/** Frees the VPS from `taskId`, setting its resulting state. */
export const releaseVps = (db: Db, id: number, taskId: number, changes: Updateable<VpsTable>) =>
  db
    .updateTable('vps')
    .set({ ...changes, task_id: null })
    .where('id', '=', id)
    .where('task_id', '=', taskId)
    .executeTakeFirst()

// Tasks

export const insertTask = (db: Db, row: Insertable<VpsTasksTable>) =>
  db.insertInto('vps_tasks').values(row).returning('id').executeTakeFirstOrThrow()

/** The account's newest task (in `status`, when given). */
export const latestTask = async (db: Db, accountId: number, status?: VpsTasksTable['status']) => {
  let q = db.selectFrom('vps_tasks').selectAll().where('account_id', '=', accountId)
  if (status) q = q.where('status', '=', status)
  const row = await q.orderBy('id', 'desc').limit(1).executeTakeFirst()
  return row && decodeTask(row)
}

export const findTask = async (db: Db, id: number) => {
  const row = await db.selectFrom('vps_tasks').selectAll().where('id', '=', id).executeTakeFirst()
  return row && decodeTask(row)
}

export const updateTask = (db: Db, id: number, changes: Updateable<VpsTasksTable>) =>
  db.updateTable('vps_tasks').set(changes).where('id', '=', id).executeTakeFirst()

/** Marks a task running and counts the attempt; false when it has ended already. */
export async function beginTask(db: Db, id: number, now: string): Promise<boolean> {
  const r = await db
    .updateTable('vps_tasks')
    .set((eb) => ({ status: 'running', attempts: eb('attempts', '+', 1), updated_at: now }))
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst()
  return Number(r.numUpdatedRows) === 1
}

/** Ends a task once: false when it had ended already. */
export async function endTask(
  db: Db,
  id: number,
  changes: { status: 'done' | 'failed'; error: string | null; params: string; now: string },
) {
  const r = await db
    .updateTable('vps_tasks')
    .set({
      status: changes.status,
      error: changes.error,
      params: changes.params,
      progress: changes.status === 'done' ? 100 : undefined,
      updated_at: changes.now,
      finished_at: changes.now,
    })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst()
  return Number(r.numUpdatedRows) === 1
}

/** Queued and running tasks of these VPS, oldest first. */
export const openTasks = async (db: Db, accountId: number, vpsIds: number[]): Promise<VpsTask[]> => {
  if (vpsIds.length === 0) return []
  const rows = await db
    .selectFrom('vps_tasks')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('vps_id', 'in', vpsIds)
    .where('status', 'in', ['queued', 'running'])
    .orderBy('id')
    .execute()
  return rows.map(decodeTask)
}

// SSH keys

export const listSshKeys = (db: Db, accountId: number) =>
  db.selectFrom('vps_ssh_keys').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

export const findSshKeys = (db: Db, accountId: number, ids: number[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db.selectFrom('vps_ssh_keys').selectAll().where('account_id', '=', accountId).where('id', 'in', ids).execute()

export const findSshKeyByFingerprint = (db: Db, accountId: number, fingerprint: string) =>
  db
    .selectFrom('vps_ssh_keys')
    .select('id')
    .where('account_id', '=', accountId)
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst()

export const insertSshKey = (db: Db, row: Insertable<VpsSshKeysTable>) =>
  db.insertInto('vps_ssh_keys').values(row).returningAll().executeTakeFirstOrThrow()

export async function deleteSshKey(db: Db, accountId: number, id: number): Promise<boolean> {
  const r = await db
    .deleteFrom('vps_ssh_keys')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(r.numDeletedRows) === 1
}

// VPC and subnets

export const findVpcOnHost = (db: Db, accountId: number, host: string) =>
  db.selectFrom('vps_vpcs').selectAll().where('account_id', '=', accountId).where('host', '=', host).executeTakeFirst()

export const countVpcs = async (db: Db, accountId: number) =>
  Number(
    (
      await db
        .selectFrom('vps_vpcs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).n,
  )

export const insertVpc = (db: Db, row: { account_id: number; name: string; host: string; created_at: string }) =>
  db.insertInto('vps_vpcs').values(row).returningAll().executeTakeFirstOrThrow()

export const listSubnets = (db: Db, accountId: number, vpcId: number) =>
  db
    .selectFrom('vps_subnets')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('vpc_id', '=', vpcId)
    .orderBy('id')
    .execute()

export const findSubnet = (db: Db, accountId: number, id: number) =>
  db
    .selectFrom('vps_subnets')
    .innerJoin('vps_vpcs', 'vps_vpcs.id', 'vps_subnets.vpc_id')
    .selectAll('vps_subnets')
    .select('vps_vpcs.host as host')
    .where('vps_subnets.account_id', '=', accountId)
    .where('vps_subnets.id', '=', id)
    .executeTakeFirst()

export const insertSubnet = (db: Db, row: Insertable<VpsSubnetsTable>) =>
  db.insertInto('vps_subnets').values(row).returningAll().executeTakeFirstOrThrow()

export const attachmentsOfSubnet = (db: Db, accountId: number, subnetId: number) =>
  db
    .selectFrom('vps_subnet_attachments')
    .innerJoin('vps_subnets', 'vps_subnets.id', 'vps_subnet_attachments.subnet_id')
    .selectAll('vps_subnet_attachments')
    .where('vps_subnets.account_id', '=', accountId)
    .where('vps_subnet_attachments.subnet_id', '=', subnetId)
    .execute()

export const attachmentsOfVps = (db: Db, accountId: number, vpsId: number) =>
  db
    .selectFrom('vps_subnet_attachments')
    .innerJoin('vps_subnets', 'vps_subnets.id', 'vps_subnet_attachments.subnet_id')
    .select([
      'vps_subnet_attachments.subnet_id',
      'vps_subnet_attachments.address',
      'vps_subnets.name',
      'vps_subnets.cidr',
    ])
    .where('vps_subnets.account_id', '=', accountId)
    .where('vps_subnet_attachments.vps_id', '=', vpsId)
    .orderBy('vps_subnet_attachments.id')
    .execute()

export const insertAttachment = (
  db: Db,
  row: { subnet_id: number; vps_id: number; address: string; created_at: string },
) => db.insertInto('vps_subnet_attachments').values(row).execute()

export const deleteAttachmentsOfVps = (db: Db, vpsId: number) =>
  db.deleteFrom('vps_subnet_attachments').where('vps_id', '=', vpsId).execute()

// Floating IPs

export const listFloatingIps = (db: Db, accountId: number) =>
  db.selectFrom('vps_floating_ips').selectAll().where('account_id', '=', accountId).orderBy('id').execute()

export const floatingIpsOfVps = (db: Db, accountId: number, vpsId: number) =>
  db
    .selectFrom('vps_floating_ips')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('vps_id', '=', vpsId)
    .orderBy('id')
    .execute()

export const findFloatingIp = (db: Db, accountId: number, id: number) =>
  db
    .selectFrom('vps_floating_ips')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()

export const insertFloatingIp = (
  db: Db,
  row: { account_id: number; ip: string; location: string; created_at: string },
) =>
  db
    .insertInto('vps_floating_ips')
    .values({ ...row, vps_id: null })
    .returningAll()
    .executeTakeFirstOrThrow()

export const setFloatingIpTarget = (db: Db, accountId: number, id: number, vpsId: number | null) =>
  db
    .updateTable('vps_floating_ips')
    .set({ vps_id: vpsId })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute()

export const deleteFloatingIp = (db: Db, accountId: number, id: number) =>
  db.deleteFrom('vps_floating_ips').where('account_id', '=', accountId).where('id', '=', id).execute()
