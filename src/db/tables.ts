import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'
import type { DomainTables } from '../modules/domains/domains.tables.js'
import type { CertificateTables } from '../modules/certificates/certificates.tables.js'
import type { CaTables } from '../drivers/ca/ca.tables.js'
import type { AccountTables } from '../modules/account/account.tables.js'
import type { AffiliateTables } from '../modules/affiliate/affiliate.tables.js'
import type { OutboxTables } from '../drivers/mail/outbox.tables.js'
import type { PaymentTables } from '../drivers/payments/payments.tables.js'
import type { AdminTables } from '../modules/admin/admin.tables.js'
import type { OrderTables } from '../modules/orders/orders.tables.js'
import type { IdempotencyTables } from '../modules/idempotency/idempotency.tables.js'
import type { VpsTables } from '../modules/vps/vps.tables.js'
import type { HypervisorSimTables } from '../drivers/hypervisor/builtin.tables.js'
import type { RegistryTables } from '../drivers/registry/builtin.tables.js'
import type { SecretTables } from '../modules/secrets/secrets.tables.js'
import type { WebhookTables } from '../modules/webhooks/webhooks.tables.js'

/**
 * The Kysely view of the schema. Portable conventions, the same on SQLite and PostgreSQL:
 * times are ISO-8601 UTC text, booleans are integers 0/1, JSON is text, money is integer cents.
 */
export interface DB
  extends FoundationTables,
    IdempotencyTables,
    DomainTables,
    OrderTables,
    VpsTables,
    HypervisorSimTables,
    RegistryTables,
    CertificateTables,
    CaTables,
    AccountTables,
    AffiliateTables,
    OutboxTables,
    PaymentTables,
    AdminTables,
    SecretTables,
    WebhookTables {}

/**
 * The foundation's tables. Each area declares its own in `src/modules/<area>/<area>.tables.ts`
 * and adds that interface to `DB` above.
 */
export interface FoundationTables {
  accounts: AccountsTable
  users: UsersTable
  api_keys: ApiKeysTable
  audit_log: AuditLogTable
  jobs: JobsTable
  account_versions: AccountVersionsTable
}

/** The version of an account's data on PostgreSQL, set by triggers in every write's transaction (migration 0470). */
export interface AccountVersionsTable {
  account_id: number
  version: number
}

export interface AccountsTable {
  id: Generated<number>
  customer_number: number
  name: string
  status: 'active' | 'suspended'
  created_at: string
}

export interface UsersTable {
  id: Generated<number>
  account_id: number
  username: string
  email: string
  firstname: string
  lastname: string
  password_hash: string | null
  is_main_user: number
  two_factor: number
  /** JSON map of permission name to boolean. */
  permissions: string
  created_at: string
}

export interface ApiKeysTable {
  id: Generated<number>
  account_id: number
  user_id: number
  /** SHA-256 of the whole key, hex. */
  key_hash: string
  prefix: string
  label: string
  expires_at: string | null
  /** JSON array of addresses and CIDR ranges. */
  allowed_ips: string
  last_used_at: string | null
  last_used_ip: string | null
  revoked_at: string | null
  created_at: string
}

export interface AuditLogTable {
  id: Generated<number>
  account_id: number | null
  user_id: number | null
  key_prefix: string | null
  ip: string
  method: string
  path: string
  status: number
  request_id: string
  created_at: string
}

export interface JobsTable {
  id: Generated<number>
  kind: string
  account_id: number | null
  payload: string
  status: 'queued' | 'running' | 'done' | 'failed'
  attempts: ColumnType<number, number | undefined, number>
  max_attempts: number
  /** Attempts during which the process running the job died (its lease ran out while `running`). */
  crashes: ColumnType<number, number | undefined, number>
  run_at: string
  locked_by: string | null
  locked_until: string | null
  last_error: string | null
  result: string | null
  created_at: string
  updated_at: string
  finished_at: string | null
  /** Unique among queued and running jobs (migration 0510): the same work is never queued twice. */
  key: string | null
}

export type Account = Selectable<AccountsTable>
export type User = Selectable<UsersTable>
export type NewUser = Insertable<UsersTable>
export type ApiKey = Selectable<ApiKeysTable>
/** A new row of `api_keys`. */
export type NewApiKey = Insertable<ApiKeysTable>
export type ApiKeyUpdate = Updateable<ApiKeysTable>
export type Job = Selectable<JobsTable>
