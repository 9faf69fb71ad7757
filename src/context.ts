import fs from 'node:fs'
import pino, { type Logger } from 'pino'
import type { Kysely } from 'kysely'
import type { Config } from './config/config.js'
import { ManualClock, systemClock, type Clock } from './clock.js'
import { AdminService } from './modules/admin/admin.service.js'
import { AdminAccountsService } from './modules/admin/admin-accounts.service.js'
import { AdminActivityService } from './modules/admin/activity.service.js'
import { CatalogService } from './modules/admin/catalog.service.js'
import { Metrics } from './ops/metrics.js'
import { hostapiVersion } from './lib/version.js'
import { crashOnJob, FaultInjector, workFaults, type WorkFaults } from './ops/faults.js'
import { RequestJournal } from './ops/journal.js'
import { openDatabase, type Database } from './db/database.js'
import type { DB } from './db/tables.js'
import { migrations } from './db/migrations/index.js'
import type { MigrationModule } from './db/migrations/helpers.js'
import { JobRunner } from './jobs/runner.js'
import { Maintenance } from './jobs/maintenance.js'
import { IamService } from './modules/iam/iam.service.js'
import { IdempotencyService } from './modules/idempotency/idempotency.service.js'
import { OrdersService } from './modules/orders/orders.service.js'
import { OrdersAdminService } from './modules/orders/orders-admin.service.js'
import { BuiltinRegistry } from './drivers/registry/builtin.js'
import { createDomainServices } from './modules/domains/services.js'
import { createVpsServices } from './modules/vps/services.js'
import { createAccountServices } from './modules/account/services.js'
import type { HypervisorDriver } from './drivers/hypervisor/hypervisor.js'
import { BuiltinHypervisor } from './drivers/hypervisor/builtin.js'
import { LxdHypervisor } from './drivers/hypervisor/lxd.js'
import type { MailDriver } from './drivers/mail/mail.js'
import { OutboxMailDriver } from './drivers/mail/builtin.js'
import { SmtpMailDriver } from './drivers/mail/smtp.js'
import { LedgerPaymentsDriver } from './drivers/payments/builtin.js'
import type { DnsDriver, ZoneSource } from './drivers/dns/dns.js'
import { BuiltinDnsServer } from './drivers/dns/builtin.js'
import { PowerDnsDriver } from './drivers/dns/powerdns.js'
import { ZoneDelivery } from './modules/domains/dns/zone-delivery.js'
import { zoneSourceOf } from './modules/domains/dns/zone-source.js'
import { AffiliateService } from './modules/affiliate/affiliate.service.js'
import { MailService } from './modules/mail/mail.service.js'
import { BuiltinCa } from './drivers/ca/builtin.js'
import { AcmeCa } from './drivers/ca/acme.js'
import { CertificatesService } from './modules/certificates/certificates.service.js'
import { accountDnsOf, type AccountDns } from './modules/certificates/account-dns.js'
import { addressLookup, servedTxtLookup, txtLookup } from './modules/certificates/txt-lookup.js'
import { openRedis, RedisGuard } from './db/redis.js'
import { MemoryWindowCounter, RedisWindowCounter, type WindowCounter } from './db/window-counter.js'
import { SecretsService } from './modules/secrets/secrets.service.js'
import { prepareDataDir } from './data-dir.js'
import { loadSecretKeys, type SecretKeys } from './secret-key.js'
import { resetSandbox } from './seed/sandbox-reset.js'
import { createWebhooksService } from './modules/webhooks/services.js'
import { DELIVERY_JOB } from './modules/webhooks/webhook-events.js'
import { SandboxEventsService } from './modules/admin/sandbox-events.service.js'
import { domainEventSamplers } from './modules/domains/domain-events.js'
import { orderEventSamplers } from './modules/orders/order-events.js'
import { vpsEventSamplers } from './modules/vps/vps-events.js'
import { certificateEventSamplers } from './modules/certificates/certificate-events.js'
import { invoiceEventSamplers } from './modules/account/invoices/invoice-events.js'
import { ticketEventSamplers } from './modules/account/tickets/ticket-events.js'

import type { Context, Drivers, Ops, Services } from './context.types.js'
export type { Context, Drivers, Ops, Services } from './context.types.js'

/** The DNS driver HOSTAPI_DNS_DRIVER names, reading the zones it serves through `zones`. */
export function dnsDriverFor(config: Config, zones: ZoneSource, log: Logger): DnsDriver {
  const d = config.dnsDriver
  if (d.driver === 'powerdns') {
    const { url, apiKey, serverId, maxBodyBytes, concurrency, dnsAddress } = d
    return new PowerDnsDriver({ url, apiKey, serverId, maxBodyBytes, concurrency, dnsAddress }, zones, log)
  }
  const opts = { ...config.dns, privateSuffixes: config.domainNames.privateSuffixes, transfer: config.dnsTransfer }
  return new BuiltinDnsServer(zones, opts, log)
}

/** The hypervisor driver the configuration picks; LXD's client certificate, key and CA are read from their files. */
function hypervisorFor(config: Config, db: Kysely<DB>, clock: Clock): HypervisorDriver {
  const lxd = config.hypervisor.lxd
  if (config.hypervisor.driver !== 'lxd' || !lxd)
    return new BuiltinHypervisor(db, clock, { speed: config.hypervisor.simSpeed })
  const read = (file: string | null) => (file ? fs.readFileSync(file, 'utf8') : undefined)
  return new LxdHypervisor({
    ...lxd,
    cert: read(lxd.clientCertFile),
    key: read(lxd.clientKeyFile),
    ca: read(lxd.caFile),
  })
}

/** The mail driver HOSTAPI_MAIL_DRIVER names: the built-in outbox or an SMTP relay (recording in the outbox). */
export function mailDriverFor(config: Config, db: Kysely<DB>, clock: Clock): MailDriver {
  const d = config.mailDriver
  if (d.driver === 'smtp') return new SmtpMailDriver(db, clock, config.mail.from, d.smtp)
  return new OutboxMailDriver(db, clock, config.mail.from)
}

// A relay may be down for a while: 16 attempts back off from 1 s to 5 min, about 40 minutes in all.
const SMTP_MAIL_ATTEMPTS = 16

/** What a caller may set instead of the defaults: the clock (tests, sandbox), the logger, the migrations. */
export interface ContextOptions {
  clock?: Clock
  log?: Logger
  /** The migrations this instance knows, instead of the release's (tests of upgrades and rollbacks). */
  migrations?: Record<string, MigrationModule>
}

/** What every driver and service is built on. */
interface Foundation {
  config: Config
  db: Kysely<DB>
  clock: Clock
  log: Logger
  jobs: JobRunner
  secrets: SecretKeys
  /** Sandbox fault injection into asynchronous work; null outside sandbox mode (no work looks a fault up). */
  faults: WorkFaults | null
}

/**
 * The drivers (the built-in ones, or the DNS, mail and CA drivers the configuration names).
 * The CA reads TXT records through `accountDns`.
 */
function createDrivers(base: Foundation, accountDns: () => AccountDns | null): Drivers {
  const { config, db, clock, log, secrets } = base
  const dns = dnsDriverFor(config, zoneSourceOf(db, secrets.box), log.child({ component: 'dns' }))
  // An ACME CA asks the zone's nameservers: so is the challenge checked before the CA is asked to look.
  const served = servedTxtLookup(accountDns, () => {
    const address = dns.address()
    return address ? [address] : []
  })
  const ca =
    config.caDriver.driver === 'acme'
      ? new AcmeCa(db, clock, served, addressLookup(accountDns), secrets.box, config.caDriver.acme, log)
      : new BuiltinCa(db, clock, txtLookup(accountDns), secrets.box, async (accountId, fqdn) => {
          const hosted = accountDns()
          return hosted ? hosted.heldElsewhere(accountId, fqdn) : false
        })
  return {
    registry: new BuiltinRegistry(db, clock, config.registry.taken),
    hypervisor: hypervisorFor(config, db, clock),
    mail: mailDriverFor(config, db, clock),
    payments: new LedgerPaymentsDriver(db, clock, config.payments.baseUrl),
    dns,
    ca,
  }
}

/** Every service, and the certificates' view of the account's DNS zones that the CA reads as well. */
function createServices(base: Foundation, drivers: Drivers): { services: Services; accountDns: AccountDns } {
  const { config, db, clock, log, jobs, secrets, faults } = base
  const mail = new MailService(jobs, drivers.mail, log, {
    maxAttempts: config.mailDriver.driver === 'smtp' ? SMTP_MAIL_ATTEMPTS : undefined,
  })
  const orders = new OrdersService(db, clock, jobs, log)
  const iam = new IamService(db, clock, {
    emptyWhitelistAllowsAll: config.emptyWhitelistAllowsAll,
    authCacheMs: config.authCacheMs,
  })
  const d = config.dnsDriver
  const zoneDelivery = new ZoneDelivery(jobs, drivers.dns, log.child({ component: 'dns' }), {
    db,
    clock,
    source: zoneSourceOf(db, secrets.box),
    probeMs: d.driver === 'powerdns' ? d.probeMs : 2000,
  })
  const domainArea = createDomainServices({
    db,
    clock,
    jobs,
    config,
    log,
    registry: drivers.registry,
    secrets: secrets.box,
    zones: zoneDelivery,
    maxRecordSetBytes: drivers.dns.maxRecordSetBytes ?? null,
    orders: () => services.orders,
    faults,
  })
  const accountDns = accountDnsOf(domainArea.domains, domainArea.dns)
  const webhooks = createWebhooksService({ db, clock, jobs, config, box: secrets.box, mail, log, faults })
  const services: Services = {
    ...domainArea,
    ...createAccountServices({ db, clock, jobs, config, payments: drivers.payments, mail, iam }),
    ...createVpsServices({ db, clock, jobs, config, hypervisor: drivers.hypervisor, faults }),
    iam,
    admin: new AdminService(db, clock),
    adminAccounts: new AdminAccountsService(db, () => services.iam),
    adminCatalog: new CatalogService(db, clock, domainArea.domains.names),
    adminActivity: new AdminActivityService(db, clock, mail),
    idempotency: new IdempotencyService(db, clock, { lockMs: config.idempotencyLockMs }),
    orders,
    ordersAdmin: new OrdersAdminService({ db, clock, jobs, orders, invoices: () => services.invoices }),
    affiliate: new AffiliateService(db, clock),
    mail,
    certificates: new CertificatesService(
      db,
      clock,
      jobs,
      drivers.ca,
      orders,
      () => accountDns,
      log,
      config.caDriver.driver === 'acme' ? config.caDriver.acme.renewDays : null,
      faults,
    ),
    secrets: new SecretsService(db, clock, secrets.box),
    zoneDelivery,
    webhooks,
    sandboxEvents: new SandboxEventsService(db, clock, jobs, {
      ...domainEventSamplers,
      ...orderEventSamplers,
      ...vpsEventSamplers,
      ...certificateEventSamplers((trx, accountId, id) => services.certificates.eventData(trx, accountId, id)),
      ...invoiceEventSamplers((trx, accountId, id) => services.invoices.eventData(trx, accountId, id)),
      ...ticketEventSamplers,
    }),
  }
  return { services, accountDns }
}

/** Connects the services to each other (charging, order processors, metrics) and registers every job. */
function registerWork(
  services: Services,
  jobs: JobRunner,
  maintenance: Maintenance,
  ops: Ops,
  database: Database,
  redisGuard: RedisGuard | null,
): void {
  ops.metrics.setSources({
    jobCounts: () => services.adminActivity.jobCounts(),
    dueJobs: () => services.adminActivity.dueJobs(),
    failedMessages: () => services.adminActivity.failedMessages(),
    ...(redisGuard ? { redis: () => redisGuard.state() } : {}),
    quarantinedJobs: () => services.adminActivity.quarantinedJobs(),
    dbRoundTrips: () => database.roundTrips(),
    webhookStats: () => services.webhooks.stats(),
  })
  services.orders.setCharger(services.invoices)
  services.orders.registerProcessor('domain', services.domainOrders)
  services.orders.registerProcessor('certificate', { process: (item) => services.certificates.processOrderItem(item) })
  services.orders.registerProcessor('vps', { process: (item) => services.vps.ordering.processOrderItem(item) })
  for (const job of [
    maintenance.pruneJob,
    services.mail.sendJob,
    services.orders.processJob,
    services.invoices.reconcileJob,
    services.invoices.issueJob,
    services.domains.endJob,
    services.domainOrders.renewJob,
    services.certificates.issuance.issueJob,
    services.certificates.renewal.renewJob,
    services.vps.tasks.taskJob,
    services.vps.lifecycle.expireJob,
    services.zoneDelivery.pushJob,
    services.zoneDelivery.resyncJob,
    services.webhooks.deliverer.deliverJob,
    services.webhooks.scans.expiringJob,
  ])
    jobs.register(job)
}

/** The customer number of an account (sandbox fault injection matches work by it), or null when it is gone. */
async function customerNumberOf(db: Kysely<DB>, accountId: number): Promise<number | null> {
  const row = await db.selectFrom('accounts').select('customer_number').where('id', '=', accountId).executeTakeFirst()
  return row?.customer_number ?? null
}

/** Builds the whole application state from a configuration: nothing listens yet. */
export function createContext(config: Config, opts: ContextOptions = {}): Context {
  const log = opts.log ?? pino({ level: config.logLevel })
  // In sandbox mode the clock is one the admin API can move; a clock given by the caller becomes its base.
  const sandboxClock = config.sandbox.enabled
    ? opts.clock instanceof ManualClock
      ? opts.clock
      : new ManualClock(opts.clock ?? systemClock)
    : null
  const clock = sandboxClock ?? opts.clock ?? systemClock
  const ops: Ops = {
    metrics: new Metrics(hostapiVersion()),
    operations: new Set(),
    sandbox: sandboxClock
      ? {
          clock: sandboxClock,
          faults: new FaultInjector(),
          journal: new RequestJournal(config.sandbox.journalSize),
          reset: (document) => resetSandbox(context, document),
        }
      : null,
  }
  // Before anything is written there: the data directory owner-only, the secret key loaded or generated.
  prepareDataDir(config, log)
  const secrets = loadSecretKeys(config, log)
  const database = openDatabase(config.database, { log: log.child({ component: 'database' }) })
  const db = database.db
  const redis = config.redisUrl ? openRedis(config.redisUrl, config.redisGuard, log) : null
  const redisGuard = redis ? new RedisGuard(redis, config.redisGuard, log) : null
  const counter: WindowCounter = redisGuard
    ? new RedisWindowCounter(redisGuard, clock, config.redisPrefix)
    : new MemoryWindowCounter(clock)
  const lanes = { [DELIVERY_JOB]: config.webhooks.concurrency }
  const onAttempt = config.sandbox.enabled && config.sandbox.crashJob ? crashOnJob(config.sandbox.crashJob) : undefined
  const jobs = new JobRunner(db, database.dialect, clock, log, { ...config.jobs, lanes, onAttempt })
  const maintenance = new Maintenance(jobs, db, clock, config.retention)
  const faults = ops.sandbox
    ? workFaults(
        ops.sandbox.faults,
        (accountId) => customerNumberOf(db, accountId),
        (work) => ops.metrics.faultInjected(work),
      )
    : null
  const base: Foundation = { config, db, clock, log, jobs, secrets, faults }
  // The CA reads TXT records through the domains area, built after the drivers.
  const drivers = createDrivers(base, () => accountDns)
  const { services, accountDns } = createServices(base, drivers)
  registerWork(services, jobs, maintenance, ops, database, redisGuard)
  const context: Context = {
    config,
    db,
    dialect: database.dialect,
    dbSchema: database.schema,
    migrations: opts.migrations ?? migrations,
    durable: () => database.durable(),
    dataVersion: database.dataVersion,
    roundTrips: () => database.roundTrips(),
    accountVersion: database.accountVersion,
    clock,
    log,
    secrets,
    redis,
    redisGuard,
    counter,
    jobs,
    maintenance,
    drivers,
    services,
    ops,
    async close() {
      await jobs.stop()
      services.zoneDelivery.stop()
      await services.dns.close()
      await services.tickets.stop()
      await database.close()
      redisGuard?.close()
      if (redis) await redis.quit().catch(() => redis.disconnect())
    },
  }
  return context
}
