import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { Db } from '../../../db/database.js'
import type { DB } from '../../../db/tables.js'
import { ApiError, errors } from '../../../errors.js'
import type { DomainsService } from '../domains.service.js'
import type { Domain } from '../domains.repository.js'
import type { ZoneChange } from '../../../lib/dns/zone-serial.js'
import type { ZoneChanges } from './zone-delivery.js'
import * as repo from './dns.repository.js'
import { emitEvent } from '../../webhooks/webhook-events.js'
import { zoneChangedEvent } from '../domain-events.js'
import {
  RECORD_TYPES,
  checkRecordSet,
  fqdnWithDot,
  normaliseRecord,
  type NormalisedRecord,
  type RecordInput,
  type RecordType,
} from '../../../lib/dns/records.js'
import { sortRecords } from '../../../lib/dns/zone-file.js'
import { ZoneWork } from './zone-work.js'
import { largestRecordSet } from '../../../lib/dns/record-set-size.js'
import type { DryRun } from '../../../lib/dry-run.js'
import { auditInsert, type PendingAudit } from '../../../db/audit.js'
import { parseDomainName } from '../../../lib/domain-name.js'
import { nextSerial } from '../../../lib/dns/zone-serial.js'

/** A record as the API shows it: the name as FQDN with the trailing dot. */
export interface RecordView {
  type: string
  name: string
  value: string
  ttl: number
}

/** How often a PATCH reads and checks again when the records at its name changed meanwhile. */
const MAX_ATTEMPTS = 20

/** How a change is made: only checked (`dryRun`), and with the request's audit row written in its transaction. */
export type Change = DryRun & { audit?: PendingAudit }

/** The record-set key a PATCH or DELETE names: a type and an owner name. */
export interface RecordSelector {
  type: string
  name?: string | null
  value?: string | null
  ttl?: number | null
}

/** What DnsService is built on. */
export interface DnsServiceDeps {
  db: Kysely<DB>
  clock: Clock
  domains: DomainsService
  zones: ZoneChanges
  /** Parsing and validation of large inputs off the event loop, and the size limits of a zone. */
  work?: ZoneWork
  /** The most bytes one record set may take in a change to the DNS server (PowerDNS); null: no limit. */
  maxRecordSetBytes?: number | null
}

/** The DNS records and zone file of a domain. Every change is atomic, raises the zone serial and republishes the zone. */
export class DnsService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly domains: DomainsService
  private readonly zones: ZoneChanges
  readonly work: ZoneWork
  private readonly maxRecordSetBytes: number | null

  constructor(deps: DnsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.domains = deps.domains
    this.zones = deps.zones
    this.work = deps.work ?? new ZoneWork()
    this.maxRecordSetBytes = deps.maxRecordSetBytes ?? null
  }

  /** Refuses records holding a record set the DNS server could never take (it would never be pushed). */
  private checkPushable(records: NormalisedRecord[]): void {
    if (this.maxRecordSetBytes === null) return
    const largest = largestRecordSet(records)
    if (largest && largest.bytes > this.maxRecordSetBytes)
      throw errors.dnsRecordSetTooLarge(`${largest.type} ${largest.name}`, largest.bytes, this.maxRecordSetBytes)
  }

  async get(accountId: number, raw: string): Promise<{ domain: string; records: RecordView[] }> {
    const d = await this.domains.requireOwned(accountId, raw)
    const records = await repo.listRecords(this.db, accountId, d.id)
    return { domain: d.name, records: sortRecords(d.name, records).map(view) }
  }

  /** Replaces every record of the zone with `input`, all or nothing. */
  async replace(
    accountId: number,
    raw: string,
    input: (Omit<RecordInput, 'name'> & { name?: string | null })[],
    opts: Change = {},
  ): Promise<void> {
    const d = await this.domains.requireOwned(accountId, raw)
    const records = await this.work.records(accountId, d.name, input)
    this.checkPushable(records)
    if (opts.dryRun) return
    await this.replaceAll(d, records, opts.audit)
  }

  /**
   * Upsert of one record set: the (type, name) set becomes this one record; `value: null` deletes the set. The
   * upsert is two statements: the records at the name read and the record checked against them, then the
   * change, the new serial and `audit` written together while those records are unchanged.
   */
  async patch(accountId: number, raw: string, input: RecordSelector, opts: Change = {}): Promise<void> {
    if (!opts.dryRun && typeof input.value === 'string') return this.upsert(accountId, raw, input, opts.audit)
    const d = await this.domains.requireOwned(accountId, raw)
    const type = recordType(input.type)
    if (input.value === null || input.value === undefined) {
      if (input.value === undefined) throw errors.dnsRecordValueRequired(`${type} ${input.name || '@'}`)
      const name = ownerName(d.name, type, input.name)
      if (opts.dryRun) return
      await this.change(
        d,
        [name],
        async (trx) => (await repo.deleteRecords(trx, accountId, d.id, type, name)) > 0,
        opts.audit,
      )
      return
    }
    const record = normaliseRecord(d.name, { type, name: input.name, value: input.value, ttl: input.ttl })
    // The record-set rules (a CNAME alone at its name) concern one name: only the records there are read.
    const checkAgainst = async (db: Db) => {
      const current = await repo.listRecordsAt(db, accountId, d.id, record.name)
      const others = current.filter((r) => r.type !== record.type)
      checkRecordSet(d.name, [...others.map((r) => ({ ...r, type: r.type as NormalisedRecord['type'] })), record])
    }
    return checkAgainst(this.db)
  }

  private async upsert(accountId: number, raw: string, input: RecordSelector, audit?: PendingAudit): Promise<void> {
    // The answers and their order are those of the dry run above: the domain first, then the record.
    const zone = parseDomainName(raw)
    if (!zone) throw errors.invalidDomainName()
    let record: NormalisedRecord | null = null
    let invalid: unknown = null
    try {
      const value = input.value as string
      record = normaliseRecord(zone, { type: recordType(input.type), name: input.name, value, ttl: input.ttl })
    } catch (err) {
      invalid = err
    }
    const now = this.clock.now()
    let written: ZoneChange
    for (let attempt = 1; ; attempt++) {
      if (attempt > MAX_ATTEMPTS) throw new Error(`the records at ${record?.name} kept changing during a PATCH`)
      const found = await repo.zoneAt(this.db, accountId, zone, record?.name ?? zone)
      if (!found) throw errors.noAccessToResource()
      if (!record) throw invalid
      const others = found.records.filter((r) => r.type !== record.type)
      checkRecordSet(found.domain.name, [...others.map((r) => ({ ...r, type: r.type as RecordType })), record])
      const domain = found.domain.name
      const published: ZoneChange = { domain, kind: 'records', names: [record.name] }
      // What commits with the record set: its event (when an endpoint listens) and its delivery (a pushing driver).
      // Without either the change is one statement on PostgreSQL.
      const along =
        found.listened || this.zones.queues
          ? async (trx: Db) => {
              if (found.listened) await emitEvent(trx, accountId, 'dns.zone.changed', zoneChangedEvent(domain), now)
              await this.zones.publish(trx, published)
            }
          : undefined
      const otherTypes = repo.otherTypes(others, record.type)
      const change = { now: iso(now), serial: nextSerial(0, now), others: otherTypes, audit, along }
      // False when the other types at the name changed since they were read: they are read and checked again.
      if (await repo.replaceRecordSet(this.db, accountId, found.domain.id, record, change)) {
        written = published
        break
      }
    }
    if (audit) audit.written = true
    await this.zones.committed(written)
  }

  /** Deletes the records matching type, name and (when given) value; nothing matching is not an error. */
  async remove(accountId: number, raw: string, input: RecordSelector, opts: Change = {}): Promise<void> {
    const d = await this.domains.requireOwned(accountId, raw)
    const type = recordType(input.type)
    const name = ownerName(d.name, type, input.name)
    let value: string | undefined
    if (input.value !== undefined && input.value !== null) {
      try {
        value = normaliseRecord(d.name, { type, name: input.name, value: input.value }).value
      } catch (err) {
        // A value that is not valid for the type cannot be stored, so nothing matches it.
        if (err instanceof ApiError) return
        throw err
      }
    }
    if (opts.dryRun) return
    await this.change(
      d,
      [name],
      async (trx) => (await repo.deleteRecords(trx, accountId, d.id, type, name, value)) > 0,
      opts.audit,
    )
  }

  /**
   * The zone as BIND text, SOA and apex NS included. The records are read in pages: when the serial changed while
   * they were read, a change may have fallen between two pages, and they are read again.
   */
  async zoneFile(accountId: number, raw: string): Promise<string> {
    let d = await this.domains.requireOwned(accountId, raw)
    for (let attempt = 1; ; attempt++) {
      const records = (await repo.listZoneRecords(this.db, accountId, d.id)) as NormalisedRecord[]
      const now = await this.domains.requireOwned(accountId, raw)
      if (now.zone_serial === d.zone_serial || attempt >= MAX_ATTEMPTS) {
        return this.work.render(accountId, d.name, { serial: d.zone_serial, nameservers: d.nameservers }, records)
      }
      d = now
    }
  }

  /** Replaces every record with those of a BIND zone text (its SOA and apex NS are ignored). */
  async importZone(accountId: number, raw: string, text: string, opts: Change = {}): Promise<void> {
    const d = await this.domains.requireOwned(accountId, raw)
    const records = await this.work.parse(accountId, d.name, text)
    this.checkPushable(records)
    if (opts.dryRun) return
    await this.replaceAll(d, records, opts.audit)
  }

  /** Stops the worker threads of large imports. */
  close(): Promise<void> {
    return this.work.close()
  }

  /** Adds records to a new domain's zone in the caller's transaction (the order processor fills it from a template). */
  async fill(db: Db, domain: Domain, records: NormalisedRecord[]): Promise<void> {
    await repo.insertRecords(db, domain.id, records, iso(this.clock.now()))
  }

  private async replaceAll(d: Domain, records: NormalisedRecord[], audit?: PendingAudit): Promise<void> {
    await this.change(
      d,
      null,
      async (trx) => {
        await repo.deleteAllRecords(trx, d.account_id, d.id)
        await repo.insertRecords(trx, d.id, records, iso(this.clock.now()))
        return true
      },
      audit,
    )
  }

  /**
   * Runs `work` in a transaction; when it changed the zone, raises the serial and records the zone's delivery there,
   * and tells the DNS servers after the commit: the records at `names`, or (null) the whole zone when every record
   * was replaced. `audit` is written in it too.
   */
  private async change(
    d: Domain,
    names: string[] | null,
    work: (trx: Db) => Promise<boolean>,
    audit?: PendingAudit,
  ): Promise<void> {
    const what: ZoneChange = names ? { domain: d.name, kind: 'records', names } : { domain: d.name, kind: 'zone' }
    const changed = await this.db.transaction().execute(async (trx) => {
      const did = await work(trx)
      if (did) await this.domains.bumpSerial(trx, d)
      if (audit) await auditInsert(trx, audit).execute()
      if (did) await emitEvent(trx, d.account_id, 'dns.zone.changed', zoneChangedEvent(d.name), this.clock.now())
      if (did) await this.zones.publish(trx, what)
      return did
    })
    if (audit) audit.written = true
    if (changed) await this.zones.committed(what)
  }
}

function view(r: { type: string; name: string; value: string; ttl: number }): RecordView {
  return { type: r.type, name: fqdnWithDot(r.name), value: r.value, ttl: r.ttl }
}

function recordType(raw: unknown): string {
  const type = typeof raw === 'string' ? raw.trim().toUpperCase() : ''
  if (!(RECORD_TYPES as readonly string[]).includes(type)) {
    throw type ? errors.dnsRecordTypeUnsupported(type, RECORD_TYPES) : errors.dnsRecordTypeRequired()
  }
  return type
}

/** The stored owner name of `name` in `zone`, by the same rules as a record's name. */
function ownerName(zone: string, type: string, name: string | null | undefined): string {
  try {
    // Any TXT value is valid at any name, so this checks the name alone.
    return normaliseRecord(zone, { type: 'TXT', name, value: 'x' }).name
  } catch (err) {
    if (err instanceof ApiError)
      throw new ApiError(err.kind, err.message.replace(/^Invalid DNS record TXT /, `Invalid DNS record ${type} `))
    throw err
  }
}
