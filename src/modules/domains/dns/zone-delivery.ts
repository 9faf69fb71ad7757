import { Type } from 'typebox'
import type { Logger } from 'pino'
import type { DnsDriver, ZoneDrift } from '../../../drivers/dns/dns.js'
import { errors } from '../../../errors.js'
import { defineJob, type JobRunner } from '../../../jobs/runner.js'
import type { ZoneChange } from '../../../lib/dns/zone-serial.js'

/** The job kind that pushes one zone change to a pushing DNS driver. */
export const DNS_PUSH_JOB = 'dns.push'
/** The job kind that compares the DNS server's zones with hostapi's and fixes the drift. */
export const DNS_RESYNC_JOB = 'dns.resync'

// With the runner's backoff (1 s doubling to 5 min) this keeps a change for about three and a half days.
const PUSH_ATTEMPTS = 1000

const ZoneChangePayload = Type.Union([
  Type.Object({
    domain: Type.String(),
    kind: Type.Literal('records'),
    names: Type.Optional(Type.Array(Type.String())),
  }),
  Type.Object({ domain: Type.String(), kind: Type.Literal('zone') }),
  Type.Object({ domain: Type.String(), kind: Type.Literal('removed') }),
])

/**
 * Delivers committed zone changes to the DNS driver. A driver that serves from the zone source is told at once;
 * a pushing driver (PowerDNS) gets each change through the job queue, so an outage of its server delays changes
 * and never loses them, and no customer request waits for it. Each push reads the zone as it is then, so pushes
 * that run late or out of order still leave the server matching hostapi.
 */
export class ZoneDelivery {
  constructor(
    private readonly jobs: JobRunner,
    private readonly driver: DnsDriver,
    private readonly log: Logger,
  ) {}

  /** The job that pushes one change. */
  readonly pushJob = defineJob({
    name: DNS_PUSH_JOB,
    payload: ZoneChangePayload,
    handle: async (change) => {
      await this.driver.publish(change)
      return { pushed: change.domain }
    },
  })

  /** The job that resyncs every zone, or those named (queued at start, so a change lost by a crash is caught). */
  readonly resyncJob = defineJob({
    name: DNS_RESYNC_JOB,
    payload: Type.Object({ names: Type.Optional(Type.Array(Type.String())) }),
    handle: async ({ names }) => {
      const drift = await this.resync(names)
      if (drift.length > 0) this.log.warn({ zones: drift.map((d) => d.zone) }, 'DNS drift found and fixed')
      return { drifted: drift.length }
    },
  })

  /** Passes a committed change on: at once to a local driver, through the queue to a pushing one. */
  async publish(change: ZoneChange): Promise<void> {
    if (!this.driver.pushes) return this.driver.publish(change)
    await this.jobs.enqueue(this.pushJob, change, { maxAttempts: PUSH_ATTEMPTS })
  }

  /** Rebuilds the server's zones (all, or those named) from hostapi's data and reports what had drifted. */
  async resync(names?: string[]): Promise<ZoneDrift[]> {
    if (!this.driver.resync) throw errors.dnsResyncUnsupported()
    return this.driver.resync(names)
  }

  /**
   * Queues a full resync when the driver pushes: changes committed just before a crash reach the server too. One is
   * queued however many instances start at once (its key).
   */
  async scheduleResync(): Promise<void> {
    if (this.driver.pushes && this.driver.resync)
      await this.jobs.enqueue(this.resyncJob, {}, { maxAttempts: 20, key: DNS_RESYNC_JOB })
  }
}
