import type { Db } from '../../db/database.js'
import type { EventSampler, EventSamplers } from '../webhooks/webhook-events.js'
import { certificateExpiringEvent, expiryMark } from '../webhooks/webhook-scans.js'
import * as repo from './certificates.repository.js'

/** A certificate as `GET /certificates/{id}` shows it: the data of `certificate.issued` and `certificate.failed`. */
type CertificateView = (db: Db, accountId: number, id: number) => Promise<Record<string, unknown>>

/**
 * The certificate events' data from the account's newest certificate (one in the state the event tells of, when
 * there is one), as issuance and the expiry scan send them (sandbox triggers); `view` is the issuance's own.
 */
export function certificateEventSamplers(view: CertificateView): EventSamplers {
  const ended =
    (status: 'ACT' | 'ERR'): EventSampler =>
    async (db, accountId) => {
      const c = (await repo.latestOwned(db, accountId, status)) ?? (await repo.latestOwned(db, accountId))
      return c && { data: await view(db, accountId, c.id) }
    }
  return {
    'certificate.issued': ended('ACT'),
    'certificate.failed': ended('ERR'),
    'certificate.expiring': async (db, accountId, now) => {
      const c = (await repo.latestOwned(db, accountId, 'ACT')) ?? (await repo.latestOwned(db, accountId))
      if (!c) return undefined
      const until = c.valid_until ?? new Date(now.getTime() + 30 * 86_400_000).toISOString()
      return { data: certificateExpiringEvent({ ...c, valid_until: until }, expiryMark(new Date(until), now)) }
    },
  }
}
