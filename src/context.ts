import pino, { type Logger } from 'pino'
import type { Config } from './config/config.js'
import { ManualClock, systemClock, type Clock } from './clock.js'
import { Metrics } from './ops/metrics.js'
import { hostapiVersion } from './lib/version.js'
import { crashOnJob, FaultInjector, workFaults } from './ops/faults.js'
import { RequestJournal } from './ops/journal.js'
import { openDatabase, type Database } from './db/database.js'
import { migrations } from './db/migrations/index.js'
import type { MigrationModule } from './db/migrations/helpers.js'
import { JobRunner } from './jobs/runner.js'
import { customerNumberOf } from './modules/iam/iam.repository.js'
import { Maintenance } from './jobs/maintenance.js'
import { openRedis, RedisGuard } from './db/redis.js'
import { MemoryWindowCounter, RedisWindowCounter, type WindowCounter } from './db/window-counter.js'
import { prepareDataDir } from './data-dir.js'
import { loadSecretKeys } from './secret-key.js'
import { resetSandbox } from './seed/sandbox-reset.js'
import { DELIVERY_JOB } from './modules/webhooks/webhook-events.js'
import type { OrderProcessors } from './modules/orders/order-processing.service.js'
import { createDrivers } from './drivers.js'
import { createServices } from './services.js'
import type { Services } from './context.types.js'
import type { Context, Foundation, Ops } from './context.types.js'
export type { Context, Drivers, Ops, Services } from './context.types.js'

/** What a caller may set instead of the defaults: the clock (tests, sandbox), the logger, the migrations. */
export interface ContextOptions {
  clock?: Clock
  log?: Logger
  /** The migrations this instance knows, instead of the release's (tests of upgrades and rollbacks). */
  migrations?: Record<string, MigrationModule>
  /** Processors of order item types no area provisions (the tests' `hosting` items). */
  orderProcessors?: OrderProcessors
  /** Where the counters are kept without Redis (a worker of `serve --workers N`: in the primary), instead of memory. */
  counter?: WindowCounter
}

/**
 * Registers every job, and the sources the metrics read at scrape time (a registration, not wiring: the metrics
 * exist before the database and the services, which report to them; see ARCHITECTURE.md).
 */
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
  for (const job of [
    maintenance.pruneJob,
    services.mail.sendJob,
    services.orderProcessing.processJob,
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
    : (opts.counter ?? new MemoryWindowCounter(clock))
  const lanes = { [DELIVERY_JOB]: config.webhooks.concurrency }
  const onAttempt = config.sandbox.enabled && config.sandbox.crashJob ? crashOnJob(config.sandbox.crashJob) : undefined
  const jobs = new JobRunner(db, database.dialect, clock, log, { ...config.jobs, lanes, onAttempt })
  const maintenance = new Maintenance({ runner: jobs, db, clock, retention: config.retention })
  const faults = ops.sandbox
    ? workFaults(
        ops.sandbox.faults,
        (accountId) => customerNumberOf(db, accountId),
        (work) => ops.metrics.faultInjected(work),
      )
    : null
  const base: Foundation = { config, db, clock, log, jobs, secrets, faults }
  // The CA reads the zones of the domains area: createServices builds it after that area's services.
  const { services, drivers } = createServices(base, createDrivers(base), opts.orderProcessors)
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
    compiles: () => database.compiles(),
    statementCounts: database.statementCounts,
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
