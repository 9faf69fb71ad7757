import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { Db } from '../../../db/database.js'
import type { DB } from '../../../db/tables.js'
import { ApiError, errors } from '../../../errors.js'
import type { DomainsService } from '../domains.service.js'
import type { Domain } from '../domains.repository.js'
import type { ZoneChanges } from './zone-delivery.js'
import * as repo from './dns.repository.js'
import { zoneRecordsJson } from './dns-json.repository.js'
import type { JsonText } from '../../../lib/json-text.js'
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
import { type RecordsAt, ZoneStore } from './zone-store.js'
import { largestRecordSet } from '../../../lib/dns/record-set-size.js'
import type { DryRun } from '../../../lib/dry-run.js'
import { parseDomainName } from '../../../lib/domain-name.js'

/** A record as the API shows it: the name as FQDN with the trailing dot. */
export interface RecordView {
  type: string
  name: string
  value: string
  ttl: number
}

/** How often the zone file is read again when the zone changed while it was read. */
const MAX_ATTEMPTS = 20

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
  readonly work: ZoneWork
  private readonly maxRecordSetBytes: number | null
  /** Every write of the zones' records, dry runs included. */
  private readonly store: ZoneStore

  constructor(deps: DnsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.domains = deps.domains
    this.work = deps.work ?? new ZoneWork()
    this.maxRecordSetBytes = deps.maxRecordSetBytes ?? null
    this.store = new ZoneStore(deps.db, deps.clock, deps.domains, deps.zones)
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

  /** What get() answers, as JSON text the database builds in one statement (dns-json.repository.ts). */
  async getJson(accountId: number, raw: string): Promise<JsonText> {
    const name = parseDomainName(raw)
    if (!name) throw errors.invalidDomainName()
    const data = await zoneRecordsJson(this.db, accountId, name)
    if (!data) throw errors.noAccessToResource()
    return data
  }

  /** Replaces every record of the zone with `input`, all or nothing. */
  async replace(
    accountId: number,
    raw: string,
    input: (Omit<RecordInput, 'name'> & { name?: string | null })[],
    opts: DryRun = {},
  ): Promise<void> {
    const d = await this.domains.requireOwned(accountId, raw)
    const records = await this.work.records(accountId, d.name, input)
    this.checkPushable(records)
    await this.store.replaceAll(d, records, opts)
  }

  /**
   * Upsert of one record set: the (type, name) set becomes this one record; `value: null` deletes the set. The
   * records at the name are read and the record checked against them, then the change, the new serial and the
   * request's audit row are written together while those records are unchanged (ZoneStore.replaceSet).
   */
  async patch(accountId: number, raw: string, input: RecordSelector, opts: DryRun = {}): Promise<void> {
    if (typeof input.value !== 'string') {
      const d = await this.domains.requireOwned(accountId, raw)
      const type = recordType(input.type)
      if (input.value === undefined) throw errors.dnsRecordValueRequired(`${type} ${input.name || '@'}`)
      await this.store.remove(d, type, ownerName(d.name, type, input.name), undefined, opts)
      return
    }
    // The answers and their order: the domain first (its name, then whether the account holds it), then the record.
    const zone = parseDomainName(raw)
    if (!zone) throw errors.invalidDomainName()
    let record: NormalisedRecord | null = null
    let invalid: unknown = null
    try {
      record = normaliseRecord(zone, {
        type: recordType(input.type),
        name: input.name,
        value: input.value,
        ttl: input.ttl,
      })
    } catch (err) {
      invalid = err
    }
    const decide = ({ zone, records }: RecordsAt): NormalisedRecord => {
      if (!record) throw invalid
      const others = records.filter((r) => r.type !== record.type)
      checkRecordSet(zone, [...others.map((r) => ({ ...r, type: r.type as RecordType })), record])
      return record
    }
    await this.store.replaceSet(accountId, zone, record?.name ?? zone, decide, opts)
  }

  /**
   * Adds one record to its record set, keeping the records there (and every other record of the zone): for changes
   * hostapi makes itself in a customer's zone, such as a certificate's validation TXT record, which must neither
   * drop a value added at the same time nor undo a change the customer made meanwhile. The same record twice is one.
   */
  async add(accountId: number, raw: string, input: RecordInput): Promise<void> {
    const d = await this.domains.requireOwned(accountId, raw)
    const record = normaliseRecord(d.name, { ...input, type: recordType(input.type) })
    await this.store.add(d, record, (atName) => {
      checkRecordSet(d.name, atName as (NormalisedRecord & { type: RecordType })[])
      this.checkPushable(atName)
    })
  }

  /** Deletes the records matching type, name and (when given) value; nothing matching is not an error. */
  async remove(accountId: number, raw: string, input: RecordSelector, opts: DryRun = {}): Promise<void> {
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
    await this.store.remove(d, type, name, value, opts)
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
  async importZone(accountId: number, raw: string, text: string, opts: DryRun = {}): Promise<void> {
    const d = await this.domains.requireOwned(accountId, raw)
    const records = await this.work.parse(accountId, d.name, text)
    this.checkPushable(records)
    await this.store.replaceAll(d, records, opts)
  }

  /** Stops the worker threads of large imports. */
  close(): Promise<void> {
    return this.work.close()
  }

  /** Adds records to a new domain's zone in the caller's transaction (the order processor fills it from a template). */
  async fill(db: Db, domain: Domain, records: NormalisedRecord[]): Promise<void> {
    await repo.insertRecords(db, domain.id, records, iso(this.clock.now()))
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
