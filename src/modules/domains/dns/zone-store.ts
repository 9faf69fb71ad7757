import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import { onPostgres, type Db } from '../../../db/database.js'
import { claimAudit, settleAudit } from '../../../db/request-audit.js'
import type { DB } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import type { NormalisedRecord } from '../../../lib/dns/records.js'
import type { DryRun } from '../../../lib/dry-run.js'
import { nextSerial, type ZoneChange } from '../../../lib/dns/zone-serial.js'
import { emitEvent } from '../../webhooks/webhook-events.js'
import { zoneChangedEvent } from '../domain-events.js'
import type { Domain } from '../domains.repository.js'
import type { DomainsService } from '../domains.service.js'
import * as repo from './dns.repository.js'
import type { ZoneChanges } from './zone-delivery.js'

/** How often a record-set change reads and checks again when the records at its name changed meanwhile. */
const MAX_ATTEMPTS = 20

/** The records at one owner name of a zone, as a record-set change reads them. */
export interface RecordsAt {
  /** The zone's name. */
  zone: string
  records: { id: number; type: string; name: string; value: string; ttl: number }[]
}

/** Thrown inside a transaction to end it with a rollback: what it read no longer holds. */
class Stale extends Error {}

/**
 * Every write of a zone's records, for every DNS change (PATCH, PUT records, DELETE record, zone import) and for
 * its dry run alike: the caller's checks ran (or, for a record set, run here on the records read), and a dry run
 * stops right here, at the write, with the answer the write would give. A write runs in one transaction with the
 * zone serial, the change's event and its delivery; the request's audit row commits with it (src/db/request-audit.ts).
 * The DNS servers are told after the commit.
 */
export class ZoneStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly domains: DomainsService,
    private readonly zones: ZoneChanges,
  ) {}

  /** Every record of `d` becomes `records`, all or nothing. */
  async replaceAll(d: Domain, records: NormalisedRecord[], opts: DryRun): Promise<void> {
    if (opts.dryRun) return
    await this.write(d, null, async (trx) => {
      await repo.deleteAllRecords(trx, d.account_id, d.id)
      await repo.insertRecords(trx, d.id, records, iso(this.clock.now()))
      return true
    })
  }

  /** Deletes the records of `d` matching type, name and (when given) value; nothing matching is not an error. */
  async remove(d: Domain, type: string, name: string, value: string | undefined, opts: DryRun): Promise<void> {
    if (opts.dryRun) return
    await this.write(
      d,
      [name],
      async (trx) => (await repo.deleteRecords(trx, d.account_id, d.id, type, name, value)) > 0,
    )
  }

  /**
   * The record set (type, name) of the account's zone becomes one record. The records at `name` are read (with the
   * zone: 400 `You have no access to this resource` when the account has no such domain), and `decide` gives the
   * record from them or throws the answer (an invalid record, a record-set rule broken). The write goes through
   * only while the other types at the name are those `decide` saw; otherwise they are read and decided again.
   */
  async replaceSet(
    accountId: number,
    zone: string,
    name: string,
    decide: (at: RecordsAt) => NormalisedRecord,
    opts: DryRun,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (attempt > MAX_ATTEMPTS) throw new Error(`the records at ${name} kept changing during a record-set change`)
      const found = await repo.zoneAt(this.db, accountId, zone, name)
      if (!found) throw errors.noAccessToResource()
      const record = decide({ zone: found.domain.name, records: found.records })
      if (opts.dryRun) return
      const now = this.clock.now()
      const domain = found.domain.name
      const published: ZoneChange = { domain, kind: 'records', names: [record.name] }
      const change = { now: iso(now), serial: nextSerial(0, now), others: repo.otherTypes(found.records, record.type) }
      // What commits with the record set: its event (when an endpoint listens) and its delivery (a pushing driver).
      const along = async (trx: Db) => {
        if (found.listened) await emitEvent(trx, accountId, 'dns.zone.changed', zoneChangedEvent(domain), now)
        await this.zones.publish(trx, published)
      }
      const alone = !found.listened && !this.zones.queues
      if (await writeRecordSet(this.db, accountId, found.domain.id, record, change, alone ? null : along)) {
        await this.zones.committed(published)
        return
      }
    }
  }

  /**
   * Runs `work` in a transaction; when it changed the zone, raises the serial and records the zone's event and
   * delivery there, and tells the DNS servers after the commit: the records at `names`, or (null) the whole zone.
   */
  private async write(d: Domain, names: string[] | null, work: (trx: Db) => Promise<boolean>): Promise<void> {
    const what: ZoneChange = names ? { domain: d.name, kind: 'records', names } : { domain: d.name, kind: 'zone' }
    const changed = await this.db.transaction().execute(async (trx) => {
      const did = await work(trx)
      if (!did) return false
      await this.domains.bumpSerial(trx, d)
      await emitEvent(trx, d.account_id, 'dns.zone.changed', zoneChangedEvent(d.name), this.clock.now())
      await this.zones.publish(trx, what)
      return true
    })
    if (changed) await this.zones.committed(what)
  }
}

/**
 * One record-set write (repo.replaceRecordSetIn's rule); false, with nothing written, when the other types at the
 * name changed or the account has no such domain. On PostgreSQL one call of dns_replace_record_set, which holds the
 * zone's row lock only inside the database (in a transaction with `along` when there is one) and writes the
 * request's audit row; on SQLite the statements of repo.replaceRecordSetIn in a transaction, whose COMMIT carries
 * the audit row (src/db/request-audit.ts).
 */
export async function writeRecordSet(
  db: Kysely<DB>,
  accountId: number,
  domainId: number,
  record: NormalisedRecord,
  change: repo.RecordSetChange,
  along: ((trx: Db) => Promise<void>) | null,
): Promise<boolean> {
  const written = async (trx: Db, ok: Promise<boolean>) => {
    if (!(await ok)) throw new Stale()
    if (along) await along(trx)
    return true
  }
  try {
    if (!onPostgres(db))
      return await db
        .transaction()
        .execute((trx) => written(trx, repo.replaceRecordSetIn(trx, accountId, domainId, record, change)))
    // The request's audit row goes into the call (the driver does not write it again at the COMMIT).
    const audit = claimAudit()
    const row = audit?.row ?? null
    let done = false
    try {
      done = along
        ? await db
            .transaction()
            .execute((trx) => written(trx, repo.replaceRecordSetCall(trx, accountId, domainId, record, change, row)))
        : await repo.replaceRecordSetCall(db, accountId, domainId, record, change, row)
    } finally {
      settleAudit(audit, done)
    }
    return done
  } catch (err) {
    if (err instanceof Stale) return false
    throw err
  }
}
