import pino, { type Logger } from 'pino'
import type { Redis } from 'ioredis'
import type { Kysely } from 'kysely'
import type { Config } from './config/config.js'
import { ManualClock, systemClock, type Clock } from './clock.js'
import { AdminService } from './modules/admin/admin.service.js'
import { Metrics } from './modules/admin/metrics.js'
import { FaultInjector } from './modules/admin/faults.js'
import { RequestJournal } from './modules/admin/journal.js'
import { openDatabase, type Dialect } from './db/database.js'
import type { DB } from './db/tables.js'
import { JobRunner } from './jobs/runner.js'
import { registerMaintenanceJobs } from './jobs/maintenance.js'
import { IamService } from './modules/iam/iam.service.js'
import { IdempotencyService } from './modules/idempotency/idempotency.service.js'
import { OrdersService } from './modules/orders/orders.service.js'
import type { RegistryDriver } from './drivers/registry/registry.js'
import { BuiltinRegistry } from './drivers/registry/builtin.js'
import { createDomainServices, type DomainServices } from './modules/domains/domain-services.js'
import type { HypervisorDriver } from './drivers/hypervisor/hypervisor.js'
import { BuiltinHypervisor } from './drivers/hypervisor/builtin.js'
import { VpsService } from './modules/vps/vps.service.js'
import type { MailDriver } from './drivers/mail/mail.js'
import { OutboxMailDriver } from './drivers/mail/builtin.js'
import type { PaymentsDriver } from './drivers/payments/payments.js'
import { LedgerPaymentsDriver } from './drivers/payments/builtin.js'
import type { DnsDriver } from './drivers/dns/dns.js'
import { BuiltinDnsServer } from './drivers/dns/builtin.js'
import { ProfileService } from './modules/account/profile.service.js'
import { InvoicesService } from './modules/account/invoices.service.js'
import { PaymethodsService } from './modules/account/paymethods.service.js'
import { UsersService } from './modules/account/users.service.js'
import { TicketsService } from './modules/account/tickets.service.js'
import { AffiliateService } from './modules/affiliate/affiliate.service.js'
import { MailService } from './modules/mail/mail.service.js'
import type { CertificateAuthority } from './drivers/ca/ca.js'
import { BuiltinCa } from './drivers/ca/builtin.js'
import { CertificatesService } from './modules/certificates/certificates.service.js'
import { accountDnsOf } from './modules/certificates/account-dns.js'
import { txtLookup } from './modules/certificates/txt-lookup.js'
import { lazyRequire } from './lazy-require.js'

/** ioredis, loaded only when REDIS_URL is set. */
const ioredis = lazyRequire<typeof import('ioredis')>('ioredis')

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
export interface Services extends DomainServices {
  iam: IamService
  admin: AdminService
  idempotency: IdempotencyService
  orders: OrdersService
  vps: VpsService
  profile: ProfileService
  invoices: InvoicesService
  paymethods: PaymethodsService
  users: UsersService
  tickets: TicketsService
  affiliate: AffiliateService
  /** Outgoing mail, queued as jobs and sent through the mail driver. */
  mail: MailService
  certificates: CertificatesService
}

/** The composition root: configuration, database, clock, logger, job runner and services. */
export interface Context {
  config: Config
  db: Kysely<DB>
  dialect: Dialect
  /** The PostgreSQL schema, when one is configured. */
  dbSchema: string | null
  /** Resolves once every write committed so far is on disk (see Database.durable). */
  durable(): Promise<void>
  /** See Database.dataVersion. */
  dataVersion: (() => string) | null
  clock: Clock
  log: Logger
  redis: Redis | null
  jobs: JobRunner
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

/** Sandbox mode (HOSTAPI_SANDBOX): `clock` is the context's clock. */
export interface Sandbox {
  clock: ManualClock
  faults: FaultInjector
  journal: RequestJournal
}

export interface ContextOptions {
  clock?: Clock
  log?: Logger
}

export function createContext(config: Config, opts: ContextOptions = {}): Context {
  const log = opts.log ?? pino({ level: config.logLevel })
  // In sandbox mode the clock is one the admin API can move; a clock given by the caller becomes its base.
  const sandboxClock = config.sandbox.enabled ? (opts.clock instanceof ManualClock ? opts.clock : new ManualClock(opts.clock ?? systemClock)) : null
  const clock = sandboxClock ?? opts.clock ?? systemClock
  const ops: Ops = {
    metrics: new Metrics(),
    operations: new Set(),
    sandbox: sandboxClock ? { clock: sandboxClock, faults: new FaultInjector(), journal: new RequestJournal(config.sandbox.journalSize) } : null,
  }
  const database = openDatabase(config.database)
  const db = database.db
  const redis = config.redisUrl ? new (ioredis().Redis)(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }) : null
  redis?.on('error', (err) => log.warn({ err: err.message }, 'redis error'))
  const jobs = new JobRunner(db, database.dialect, clock, log, config.jobs)
  registerMaintenanceJobs(jobs, db, clock, 90)
  const drivers: Drivers = {
    registry: new BuiltinRegistry(db, clock, config.registry.taken),
    hypervisor: new BuiltinHypervisor(db, clock, { speed: config.hypervisor.simSpeed }),
    mail: new OutboxMailDriver(db, clock, config.mail.from),
    payments: new LedgerPaymentsDriver(db, clock, config.payments.baseUrl),
    dns: new BuiltinDnsServer(db, { ...config.dns, privateSuffixes: config.domainNames.privateSuffixes }, log.child({ component: 'dns' })),
    // The CA reads TXT records through the domains area, built below.
    ca: new BuiltinCa(db, clock, txtLookup(() => accountDns)),
  }
  const mail = new MailService(jobs, drivers.mail, log)
  const profile = new ProfileService(db, clock, mail)
  const orders = new OrdersService(db, clock, jobs)
  const domainArea = createDomainServices({
    db, clock, jobs, config, log,
    registry: drivers.registry,
    publish: (name) => drivers.dns.publish(name),
    orders: () => services.orders,
  })
  const accountDns = accountDnsOf(domainArea.domains, domainArea.dns)
  const services: Services = {
    ...domainArea,
    iam: new IamService(db, clock, { emptyWhitelistAllowsAll: config.emptyWhitelistAllowsAll, authCacheMs: config.authCacheMs }),
    admin: new AdminService(db, clock, () => services.iam, domainArea.domains.names),
    idempotency: new IdempotencyService(db, clock),
    orders,
    vps: new VpsService(db, clock, jobs, drivers.hypervisor, { shutdownTimeoutSeconds: config.hypervisor.shutdownTimeoutSeconds }),
    profile,
    invoices: new InvoicesService(db, clock, config.billing, drivers.payments, profile, mail, jobs),
    paymethods: new PaymethodsService(db, clock, drivers.payments, profile),
    users: new UsersService(db, clock, () => services.iam, { newUsersPerHour: 10 }),
    tickets: new TicketsService(db, clock, mail, profile, config.mail.supportAddress),
    affiliate: new AffiliateService(db, clock),
    mail,
    certificates: new CertificatesService(db, clock, jobs, drivers.ca, orders, () => accountDns, log),
  }
  ops.metrics.setSources({ jobCounts: () => services.admin.jobCounts() })
  services.orders.setCharger(services.invoices)
  services.orders.registerProcessor('domain', services.domainOrders)
  services.orders.registerProcessor('certificate', { process: (item) => services.certificates.processOrderItem(item) })
  services.vps.registerJobs()
  services.orders.registerProcessor('vps', { process: (item) => services.vps.processOrderItem(item) })
  return {
    config,
    db,
    dialect: database.dialect,
    dbSchema: database.schema,
    durable: () => database.durable(),
    dataVersion: database.dataVersion,
    clock,
    log,
    redis,
    jobs,
    drivers,
    services,
    ops,
    async close() {
      await jobs.stop()
      await services.dns.close()
      await database.close()
      if (redis) await redis.quit().catch(() => undefined)
    },
  }
}
