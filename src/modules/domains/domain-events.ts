import type { EventSamplers } from '../webhooks/webhook-events.js'
import { domainExpiringEvent, expiryMark } from '../webhooks/webhook-scans.js'
import * as repo from './domains.repository.js'

/** The data of `domain.status.changed`: the domain, its new status, its renewal date. */
export const statusEvent = (d: { name: string; renewal_date: string }, to: { status: string; id: number }) => ({
  domain: d.name,
  status: to.status,
  status_id: to.id,
  renewal_date: d.renewal_date,
})

/** The data of `dns.zone.changed`: the domain whose records changed. */
export const zoneChangedEvent = (domain: string) => ({ domain })

/** The domain events' data from the account's newest domain, as their causes send it (sandbox triggers). */
export const domainEventSamplers: EventSamplers = {
  'domain.status.changed': async (db, accountId) => {
    const d = await repo.latestDomain(db, accountId)
    return d && { data: statusEvent(d, { status: d.status, id: d.status_id }) }
  },
  'domain.expiring': async (db, accountId, now) => {
    const d = await repo.latestDomain(db, accountId)
    return d && { data: domainExpiringEvent(d, expiryMark(new Date(`${d.renewal_date}T00:00:00Z`), now)) }
  },
  'dns.zone.changed': async (db, accountId) => {
    const d = await repo.latestDomain(db, accountId)
    return d && { data: zoneChangedEvent(d.name) }
  },
}
