import type { Redis } from 'ioredis'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from './clock.js'
import type { Config } from './config/config.js'
import type { Dialect } from './db/database.js'
import type { MigrationModule } from './db/migrations/helpers.js'
import type { RedisGuard } from './db/redis.js'
import type { DB } from './db/tables.js'
import type { WindowCounter } from './db/window-counter.js'
import type { CertificateAuthority } from './drivers/ca/ca.js'
import type { DnsDriver } from './drivers/dns/dns.js'
import type { HypervisorDriver } from './drivers/hypervisor/hypervisor.js'
import type { MailDriver } from './drivers/mail/mail.js'
import type { PaymentsDriver } from './drivers/payments/payments.js'
import type { RegistryDriver } from './drivers/registry/registry.js'
import type { JobRunner } from './jobs/runner.js'
import type { Maintenance } from './jobs/maintenance.js'
import type { AccountServices } from './modules/account/services.js'
import type { AdminActivityService } from './modules/admin/activity.service.js'
import type { AdminInspectService } from './modules/admin/inspect.service.js'
import type { AdminAccountsService } from './modules/admin/admin-accounts.service.js'
import type { AdminService } from './modules/admin/admin.service.js'
import type { CatalogService } from './modules/admin/catalog.service.js'
import type { SandboxEventsService } from './modules/admin/sandbox-events.service.js'
import type { AffiliateService } from './modules/affiliate/affiliate.service.js'
import type { CertificatesService } from './modules/certificates/certificates.service.js'
import type { DomainServices } from './modules/domains/services.js'
import type { ZoneDelivery } from './modules/domains/dns/zone-delivery.js'
import type { IamService } from './modules/iam/iam.service.js'
import type { IdempotencyService } from './modules/idempotency/idempotency.service.js'
import type { MailService } from './modules/mail/mail.service.js'
import type { OrdersAdminService } from './modules/orders/orders-admin.service.js'
import type { OrdersService } from './modules/orders/orders.service.js'
import type { OrderProcessingService } from './modules/orders/order-processing.service.js'
import type { SecretsService } from './modules/secrets/secrets.service.js'
import type { VpsServices } from './modules/vps/services.js'
import type { WebhooksService } from './modules/webhooks/webhooks.service.js'
import type { WorkFaults } from './ops/faults.js'
import type { Metrics } from './ops/metrics.js'
import type { Sandbox } from './ops/sandbox.js'
import type { SecretKeys } from './secret-key.js'

/** The providers behind interfaces; the built-in ones work on one machine. */
export interface Drivers {
  registry: RegistryDriver
  hypervisor: HypervisorDriver
  mail: MailDriver
  payments: PaymentsDriver
  dns: DnsDriver
  ca: CertificateAuthority
}

/** Every service of the application, built once per process. */
export interface Services extends DomainServices, AccountServices, VpsServices {
  iam: IamService
  /** Admin tokens; the operator's accounts, catalogue and activity follow. */
  admin: AdminService
  adminAccounts: AdminAccountsService
  /** One account's resources as the sandbox inspector shows them. */
  adminInspect: AdminInspectService
  adminCatalog: CatalogService
  adminActivity: AdminActivityService
  idempotency: IdempotencyService
  orders: OrdersService
  /** The job that provisions the items of orders through the areas' processors, and the corrections of an order. */
  orderProcessing: OrderProcessingService
  /** The operator's orders of every account and the repairs of a stranded one. */
  ordersAdmin: OrdersAdminService
  affiliate: AffiliateService
  /** Outgoing mail, queued as jobs and sent through the mail driver. */
  mail: MailService
  certificates: CertificatesService
  /** Secrets at rest: the start-up key check and the key rotation. */
  secrets: SecretsService
  /** Committed zone changes on their way to the DNS driver (through the job queue for a pushing one). */
  zoneDelivery: ZoneDelivery
  /** Webhook endpoints and the delivery of events to them. */
  webhooks: WebhooksService
  /** Sandbox triggers of any webhook event, with the payload of the account's own resource. */
  sandboxEvents: SandboxEventsService
}

/** What every driver and service is built on. */
export interface Foundation {
  config: Config
  db: Kysely<DB>
  clock: Clock
  log: Logger
  jobs: JobRunner
  secrets: SecretKeys
  /** Sandbox fault injection into asynchronous work; null outside sandbox mode (no work looks a fault up). */
  faults: WorkFaults | null
}

/** The composition root: configuration, database, clock, logger, job runner and services. */
export interface Context {
  config: Config
  db: Kysely<DB>
  dialect: Dialect
  /** The PostgreSQL schema, when one is configured. */
  dbSchema: string | null
  /** The migrations this release knows, by name. */
  migrations: Record<string, MigrationModule>
  /** Resolves once every write committed so far is on disk (see Database.durable). */
  durable(): Promise<void>
  /** See Database.dataVersion. */
  dataVersion: (() => string) | null
  /** See Database.roundTrips. */
  roundTrips(): number
  /** See Database.compiles. */
  compiles(): number
  /** See Database.statementCounts. */
  statementCounts: (() => { unnamed: number; named: number }) | null
  /** See Database.accountVersion. */
  accountVersion: ((accountId: number) => Promise<string>) | null
  clock: Clock
  log: Logger
  /** The key that seals secrets at rest (and previous ones during a rotation). */
  secrets: SecretKeys
  redis: Redis | null
  /** The breaker around Redis (null without Redis); its health is `degraded` while counters are per instance. */
  redisGuard: RedisGuard | null
  /** Fixed-window counters (rate limits, failed credentials): in Redis when configured, else in memory. */
  counter: WindowCounter
  jobs: JobRunner
  /** Housekeeping jobs (the daily prune). */
  maintenance: Maintenance
  drivers: Drivers
  services: Services
  ops: Ops
  close(): Promise<void>
}

/** Operating state of this process: metrics always; the sandbox's clock, faults and journal in sandbox mode. */
export interface Ops {
  metrics: Metrics
  /** The operationIds of the customer API, as the app registered them. */
  operations: Set<string>
  sandbox: Sandbox | null
}
