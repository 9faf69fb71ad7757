import type { Db } from '../../db/database.js'

/** The operator's reads of one account's resources, for the sandbox inspector: domains with records, VPS with tasks, certificates. */

/** The most rows of each kind one read returns (a sandbox account holds a handful; the bound keeps the answer small). */
export const RESOURCE_LIMIT = 200
/** The most VPS tasks shown per VPS, newest first. */
export const TASKS_PER_VPS = 10

export const accountDomains = (db: Db, accountId: number) =>
  db
    .selectFrom('domains')
    .select(['id', 'name', 'status', 'renewal_date', 'is_locked', 'dnssec_enabled', 'managed_dns', 'zone_serial'])
    .where('account_id', '=', accountId)
    .orderBy('name')
    .limit(RESOURCE_LIMIT)
    .execute()

export const domainRecords = (db: Db, domainIds: number[]) =>
  domainIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('dns_records')
        .select(['domain_id', 'type', 'name', 'value', 'ttl'])
        .where('domain_id', 'in', domainIds)
        .orderBy('domain_id')
        .orderBy('name')
        .orderBy('type')
        .orderBy('id')
        .limit(RESOURCE_LIMIT * 10)
        .execute()

export const accountVps = (db: Db, accountId: number) =>
  db
    .selectFrom('vps')
    .select(['id', 'name', 'hostname', 'product_id', 'location', 'status', 'rescue', 'task_id', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(RESOURCE_LIMIT)
    .execute()

export const vpsTasks = (db: Db, accountId: number, vpsIds: number[]) =>
  vpsIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('vps_tasks')
        .select(['id', 'vps_id', 'action', 'status', 'progress', 'attempts', 'error', 'created_at', 'finished_at'])
        .where('account_id', '=', accountId)
        .where('vps_id', 'in', vpsIds)
        .orderBy('id', 'desc')
        .limit(RESOURCE_LIMIT * TASKS_PER_VPS)
        .execute()

export const accountCertificates = (db: Db, accountId: number) =>
  db
    .selectFrom('certificates')
    .select(['id', 'common_name', 'domains', 'status', 'status_message', 'valid_until', 'ends_at', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(RESOURCE_LIMIT)
    .execute()
