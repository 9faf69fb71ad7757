import { Type } from 'typebox'
import type { Logger } from 'pino'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { Db } from '../../../db/database.js'
import type { DnsDriver, ResyncProgress, ZoneDrift, ZoneSource } from '../../../drivers/dns/dns.js'
import { errors } from '../../../errors.js'
import { defineJob, type JobRunner } from '../../../jobs/runner.js'
import { crashPoint } from '../../../ops/crash-points.js'
import type { ZoneChange } from '../../../lib/dns/zone-serial.js'
import * as sync from './zone-sync.repository.js'

/** The job kind that pushes one zone change to a pushing DNS driver. */
export const DNS_PUSH_JOB = 'dns.push'
/** How a push job's payload of `zone` starts (its first field). */
const payloadStart = (zone: string) => `{"domain":${JSON.stringify(zone)},`

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

/** How the domains area hands a zone change on: `publish` in the change's transaction, `committed` after it. */
export type ZoneChanges = Pick<ZoneDelivery, 'publish' | 'committed' | 'queues'>

/**
 * Delivers committed zone changes to the DNS driver. A driver that serves from the zone source is told at once;
 * a pushing driver (PowerDNS) gets each change through the job queue, so an outage of its server delays changes
 * and never loses them, and no customer request waits for it. Each push reads the zone as it is then, and again
 * after writing (the driver pushes again when it changed), so pushes that run late, out of order or on several
 * instances at once still leave the server matching hostapi.
 */
export class ZoneDelivery {
  /** Asks an unreachable server whether it is back, while pushes wait on it. */
  private probe: NodeJS.Timeout | null = null

  constructor(
    private readonly jobs: JobRunner,
    private readonly driver: DnsDriver,
    private readonly log: Logger,
    private readonly state: { db: Db; clock: Clock; source: ZoneSource; probeMs: number },
  ) {}

  /**
   * The job that pushes one change. Its outcome is kept as the zone's push state (admin API); a failure starts a
   * probe of the server, and once it answers again every queued push runs at once instead of sitting out its backoff.
   */
  readonly pushJob = defineJob({
    name: DNS_PUSH_JOB,
    payload: ZoneChangePayload,
    handle: async (change, { job }) => {
      const { db, clock, source } = this.state
      const zone = change.domain
      const [served] = await source.servedZones([zone])
      try {
        await this.driver.publish(change)
      } catch (err) {
        await sync.markFailed(db, zone, err instanceof Error ? err.message : String(err), iso(clock.now()))
        this.probeUntilBack()
        throw err
      }
      if (!served) await sync.forget(db, zone)
      else {
        const settled = !(await this.jobs.pendingWith(this.pushJob, payloadStart(zone), job.id))
        await sync.markPushed(db, zone, served.serial, settled, iso(clock.now()))
      }
      return { pushed: zone }
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

  /** Whether `publish` writes anything: a pushing driver's change is queued as a job in the change's transaction. */
  get queues(): boolean {
    return this.driver.pushes === true
  }

  /**
   * Records a zone change in the transaction that makes it: for a pushing driver the zone is marked changed and its
   * push job is queued there, so the change and its delivery commit together or not at all. After the commit the
   * caller calls `committed` with the same changes.
   */
  async publish(trx: Db, change: ZoneChange): Promise<void> {
    if (!this.driver.pushes) return
    await sync.markChanged(trx, change.domain, iso(this.state.clock.now()))
    // The domain first: pendingWith finds a zone's pushes by the start of their payload.
    const { domain, ...rest } = change
    await this.jobs.enqueue(this.pushJob, { domain, ...rest } as ZoneChange, { trx, maxAttempts: PUSH_ATTEMPTS })
  }

  /**
   * After the commit of changes passed to `publish`: a local driver is told of them at once, the queued pushes of a
   * pushing one run now. A failure is logged, never thrown: the changes are stored (and a push is queued).
   */
  async committed(...changes: ZoneChange[]): Promise<void> {
    if (changes.length === 0) return
    crashPoint('dns.change.committed')
    if (this.driver.pushes) return this.jobs.poke()
    for (const change of changes) {
      try {
        await this.driver.publish(change)
      } catch (err) {
        this.log.warn({ err, domain: change.domain }, 'publishing the zone failed')
      }
    }
  }

  /**
   * The push state of the served zones (those named, or all, at most `limit`): in sync, pending since, the last
   * error; with `pending`, only the zones not in sync. A driver that serves from the database itself pushes nothing:
   * `pushes` false and no zones.
   */
  async syncState(zones?: string[], opts: { pending?: boolean; limit?: number } = {}) {
    if (!this.driver.pushes) return { pushes: false, zones: [] }
    const rows = await sync.listSync(this.state.db, zones, opts.limit ?? 1000)
    const states = rows.map((r) => ({ ...r, in_sync: r.pending_since === null && r.pushed_serial !== null }))
    return { pushes: true, zones: opts.pending ? states.filter((z) => !z.in_sync) : states }
  }

  /** Stops the probe of an unreachable server. */
  stop(): void {
    if (this.probe) clearTimeout(this.probe)
    this.probe = null
  }

  /** Asks the server every probeMs whether it answers; once it does, the queued pushes run now. */
  private probeUntilBack(): void {
    const ping = this.driver.ping?.bind(this.driver)
    if (!ping || this.probe) return
    const again = () => {
      this.probe = setTimeout(async () => {
        try {
          await ping()
        } catch {
          return again()
        }
        this.probe = null
        const n = await this.jobs.release(this.pushJob).catch((err: unknown) => {
          this.log.error({ err }, 'queued DNS pushes could not be released')
          return 0
        })
        this.log.info({ released: n }, 'DNS server answers again: queued pushes run now')
      }, this.state.probeMs)
      this.probe.unref()
    }
    again()
  }

  /** Rebuilds the server's zones (all, or those named) from hostapi's data and reports what had drifted. */
  async resync(names?: string[], progress?: ResyncProgress): Promise<ZoneDrift[]> {
    if (!this.driver.resync) throw errors.dnsResyncUnsupported()
    return this.driver.resync(names, progress)
  }

  /**
   * Queues a full resync when the driver pushes: changes committed just before a crash reach the server too. One is
   * queued however many instances start at once (its key).
   */
  async scheduleResync(): Promise<void> {
    if (this.driver.pushes && this.driver.resync)
      await this.jobs.enqueue(this.resyncJob, {}, { trx: this.state.db, maxAttempts: 20, key: DNS_RESYNC_JOB })
  }
}
