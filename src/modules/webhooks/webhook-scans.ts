import type { Kysely } from 'kysely'
import { present } from '../../lib/invariant.js'
import { Type } from 'typebox'
import { iso, ymd, type Clock } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import { emitEvent } from './webhook-events.js'
import type { WebhookDeliverer } from './webhook-deliverer.js'
import * as repo from './webhooks.repository.js'

const DAY_MS = 86_400_000
const SCAN_EVERY_MS = 3600_000
// Finished deliveries (and events left without one) are kept this long, for the delivery lists and redelivery.
const KEEP_MS = 30 * DAY_MS
// The job kind of the expiry scan.
const EXPIRING_JOB = 'webhooks.expiring'
// Days before renewal or expiry, each with the next (smaller) mark: the 30-day event covers 30 to 8 days.
const EXPIRY_MARKS: [number, number][] = [
  [30, 7],
  [7, 0],
]

/** The data of `domain.expiring`: the domain, its status and renewal date, and the mark (30 or 7 days). */
export const domainExpiringEvent = (d: { name: string; status: string; renewal_date: string }, days: number) => ({
  domain: d.name,
  status: d.status,
  renewal_date: d.renewal_date,
  days,
})

/** The data of `certificate.expiring`: the certificate, its status and expiry, and the mark (30 or 7 days). */
export const certificateExpiringEvent = (
  c: { id: number; common_name: string | null; status: string; valid_until: string },
  days: number,
) => ({ id: c.id, common_name: c.common_name, certificate_status: c.status, valid_until: c.valid_until, days })

/** The mark an expiry at `at` falls under now: 7 within 7 days, else 30 (the first event sent). */
export const expiryMark = (at: Date, now: Date): number => (at.getTime() - now.getTime() <= 7 * DAY_MS ? 7 : 30)

/** What WebhookScans is built on. */
export interface WebhookScansDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  deliverer: WebhookDeliverer
}

/** The hourly work of the webhooks area: events for what expires soon, the prune, the restart of parked deliveries. */
export class WebhookScans {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly deliverer: WebhookDeliverer

  constructor(deps: WebhookScansDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.deliverer = deps.deliverer
  }

  /**
   * The hourly scan for domains and certificates 30 and 7 days from renewal or expiry, and the prune of deliveries
   * finished 30 days ago.
   */
  readonly expiringJob = defineJob({
    name: EXPIRING_JOB,
    payload: Type.Null(),
    recurring: true,
    handle: async () => {
      const pruned = await repo.pruneDelivered(this.db, iso(new Date(this.clock.now().getTime() - KEEP_MS)))
      const restarted = await this.deliverer.restartParked(this.clock.now())
      const events = await this.scanExpiring()
      return { events, pruned, restarted }
    },
  })

  /** Schedules the hourly expiry scan (one across every instance). */
  async scheduleScan(): Promise<void> {
    await this.jobs.every(this.expiringJob, SCAN_EVERY_MS)
  }

  /**
   * Records `domain.expiring` and `certificate.expiring` for what is 30 days (and then 7 days) or less from its
   * renewal or expiry, once per mark and period: the event id names them, so a scan that runs again records
   * nothing new. Only the nearest mark is sent (an endpoint added 5 days before gets the 7-day event alone).
   */
  async scanExpiring(): Promise<number> {
    const now = this.clock.now()
    const day = (n: number) => new Date(now.getTime() + n * DAY_MS)
    let n = 0
    for (const [mark, next] of EXPIRY_MARKS) {
      for (const d of await repo.domainsRenewedBetween(this.db, ymd(day(next)), ymd(day(mark)))) {
        const data = domainExpiringEvent(d, mark)
        const uid = `msg_domain_expiring_${d.id}_${d.renewal_date}_${mark}`
        await this.db
          .transaction()
          .execute((trx) => emitEvent(trx, d.account_id, 'domain.expiring', data, now, { uid }))
        n++
      }
      for (const c of await repo.certificatesExpiringBetween(this.db, iso(day(next)), iso(day(mark)))) {
        const until = present(c.valid_until, `valid_until of certificate ${c.id}`)
        const data = certificateExpiringEvent({ ...c, valid_until: until }, mark)
        const uid = `msg_certificate_expiring_${c.id}_${until.slice(0, 10)}_${mark}`
        const type = 'certificate.expiring' as const
        await this.db.transaction().execute((trx) => emitEvent(trx, c.account_id, type, data, now, { uid }))
        n++
      }
    }
    return n
  }
}
