import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import { onPostgres, type Db } from '../../../db/database.js'
import type { AuditEntry } from '../../../db/audit.repository.js'
import { claimAudit, settleAudit } from '../../../db/request-audit.js'
import type { DB } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import type { NormalisedRecord } from '../../../lib/dns/records.js'
import type { DryRun } from '../../../lib/dry-run.js'
import { batchEachTurn } from '../../../lib/turn-batch.js'
import { nextSerial, type ZoneChange } from '../../../lib/dns/zone-serial.js'
import { emitEvent } from '../../webhooks/webhook-events.js'
import { zoneChangedEvent } from '../domain-events.js'
import type { Domain } from '../domains.repository.js'
import type { DomainsService } from '../domains.service.js'
import * as repo from './dns.repository.js'
import type { ZoneChanges } from './zone-delivery.js'

/** How often a record-set change reads and checks again when the records at its name changed meanwhile. */
const MAX_ATTEMPTS = 20
/** The names whose records a store keeps as last read, and the most records a name may have to be kept. */
const LAST_READ_NAMES = 4096
const LAST_READ_RECORDS = 32

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
  /** The records last read at an owner name (`lastReadKey`), oldest name first: a record-set change decides on them first. */
  private readonly lastRead = new Map<string, RecordsAt['records']>()

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

  /**
   * Adds `record` to its record set of `d`, keeping the records there: nothing when the same type, name and value is
   * there already. `check` gets the records at the name and the new one, and throws the answer when they may not
   * stand together. Decided under the zone's lock (repo.lockedRecordsAt), so concurrent additions at a name all land
   * and none undoes another change of the zone, as a read followed by a record-set or zone replacement would.
   */
  async add(d: Domain, record: NormalisedRecord, check: (atName: NormalisedRecord[]) => void): Promise<void> {
    await this.write(d, [record.name], async (trx) => {
      const at = await repo.lockedRecordsAt(trx, d.account_id, d.id, record.name)
      if (!at) throw errors.noAccessToResource()
      if (at.some((r) => r.type === record.type && r.value === record.value)) return false
      check([...(at as NormalisedRecord[]), record])
      await repo.insertRecords(trx, d.id, [record], iso(this.clock.now()))
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
    const key = lastReadKey(accountId, zone, name)
    if (!opts.dryRun && (await this.replaceAsLastRead(accountId, zone, key, decide))) return
    for (let attempt = 1; ; attempt++) {
      if (attempt > MAX_ATTEMPTS) throw new Error(`the records at ${name} kept changing during a record-set change`)
      const found = await repo.zoneAt(this.db, accountId, zone, name)
      this.remember(key, found?.records)
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
   * On PostgreSQL, where nothing commits along with a record set but its audit row (no pushing driver; whether a
   * webhook endpoint listens the database checks): the record decided on the records last read at the name and
   * written in one round trip with no read before it, only while the other types there are still those
   * (writeRecordSetAt). False, with nothing written, when there is no such read, `decide` refuses (the answer then
   * comes from a fresh read), or the write did not go through.
   */
  private async replaceAsLastRead(
    accountId: number,
    zone: string,
    key: string,
    decide: (at: RecordsAt) => NormalisedRecord,
  ): Promise<boolean> {
    if (this.zones.queues || !onPostgres(this.db)) return false
    const records = this.lastRead.get(key)
    if (!records) return false
    let record: NormalisedRecord
    try {
      record = decide({ zone, records })
    } catch {
      return false
    }
    const now = this.clock.now()
    const change = { now: iso(now), serial: nextSerial(0, now), others: repo.otherTypes(records, record.type) }
    if (!(await writeRecordSetAt(this.db, accountId, zone, record, change))) return false
    await this.zones.committed({ domain: zone, kind: 'records', names: [record.name] })
    return true
  }

  /** Keeps the records read at a name (forgets them when the zone was not found or the name has many). */
  private remember(key: string, records: RecordsAt['records'] | undefined): void {
    this.lastRead.delete(key)
    if (!records || records.length > LAST_READ_RECORDS) return
    this.lastRead.set(key, records)
    const oldest = this.lastRead.keys().next()
    if (this.lastRead.size > LAST_READ_NAMES && !oldest.done) this.lastRead.delete(oldest.value)
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
    return await withAuditRow((row) =>
      along
        ? db
            .transaction()
            .execute((trx) => written(trx, repo.replaceRecordSetCall(trx, accountId, domainId, record, change, row)))
        : repo.replaceRecordSetCall(db, accountId, domainId, record, change, row),
    )
  } catch (err) {
    if (err instanceof Stale) return false
    throw err
  }
}

/**
 * PostgreSQL: writeRecordSet with nothing along, for the account's zone named `zone`, in one round trip with no read
 * before it (one call of dns_replace_record_set_at, which writes the request's audit row too). False, with nothing
 * written, when the account has no such zone, an enabled webhook endpoint of the account listens (the change's event
 * must commit with it: writeRecordSet with `along`), or the other types at the name changed.
 */
export async function writeRecordSetAt(
  db: Kysely<DB>,
  accountId: number,
  zone: string,
  record: NormalisedRecord,
  change: repo.RecordSetChange,
): Promise<boolean> {
  let write = recordSetWrites.get(db)
  if (!write) {
    write = batchEachTurn((writes: repo.RecordSetWrite[]) => writeTogether(db, writes), {
      laneOf: (w) => `${w.accountId} ${w.zone}`,
    })
    recordSetWrites.set(db, write)
  }
  const batched = write
  return withAuditRow((audit) => batched({ accountId, zone, record, change, audit }))
}

/**
 * Per database: the writes of writeRecordSetAt made within one event-loop turn, sent together after it; a zone's writes
 * wait for its previous call to end, and go together in the next (one call per zone at a time).
 */
const recordSetWrites = new WeakMap<Kysely<DB>, (w: repo.RecordSetWrite) => Promise<boolean>>()

/**
 * Concurrent requests' record-set writes in one round trip and one commit (group commit): each is durable before
 * its request is answered, as alone. Ordered by account and zone (a zone's writes in the order they came), so two
 * such calls lock in one order; when the call fails (a deadlock with another transaction, one write's error), each
 * write is made alone, and gets its own answer or error.
 */
async function writeTogether(db: Kysely<DB>, writes: repo.RecordSetWrite[]) {
  if (writes.length > 1) {
    const order = writes
      .map((w, i) => ({ w, i }))
      .sort((a, b) => a.w.accountId - b.w.accountId || (a.w.zone < b.w.zone ? -1 : a.w.zone > b.w.zone ? 1 : a.i - b.i))
    try {
      const answers = await repo.replaceRecordSetsAtCall(
        db,
        order.map((o) => o.w),
      )
      const out: PromiseSettledResult<boolean>[] = new Array(writes.length)
      order.forEach((o, k) => {
        out[o.i] = { status: 'fulfilled', value: answers[k] === true }
      })
      return out
    } catch {
      // Made alone below.
    }
  }
  return Promise.allSettled(writes.map((w) => repo.replaceRecordSetAtCall(db, w)))
}

/**
 * Runs `write` with the request's audit row, when it has one not yet written, for `write` to write with its change
 * (the driver does not write it again at a COMMIT); the row counts as written when `write` answers true.
 */
async function withAuditRow(write: (row: AuditEntry | null) => Promise<boolean>): Promise<boolean> {
  const audit = claimAudit()
  let done = false
  try {
    done = await write(audit?.row ?? null)
  } finally {
    settleAudit(audit, done)
  }
  return done
}

/** The key of an owner name's records in ZoneStore's last reads. */
const lastReadKey = (accountId: number, zone: string, name: string) => `${accountId} ${zone} ${name}`
