import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { DB } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import { checkRecordSet, normaliseRecord, type NormalisedRecord } from '../../../lib/dns/records.js'
import * as repo from './dns-templates.repository.js'
import type { DryRun } from '../../../lib/dry-run.js'

import type { TemplateRecord } from './dns-templates.types.js'
export type { TemplateRecord } from './dns-templates.types.js'

/** A template record as clients send it (`priority` goes in front of an MX or SRV value). */
export interface TemplateRecordInput {
  type: string
  name?: string | null
  value: string
  ttl?: number | null
  priority?: number | null
}

/** The body of create and update. */
export interface TemplateInput {
  alias?: string
  default?: boolean | number
  records?: TemplateRecordInput[]
}

/** A DNS template as the API shows it. */
export interface TemplateView {
  id: number
  alias: string
  default: number
  records: TemplateRecord[]
}

// Template records are checked against a stand-in zone; they are checked again against the real one when applied.
const STAND_IN = 'template.invalid'

/** What DnsTemplatesService is built on. */
export interface DnsTemplatesServiceDeps {
  db: Kysely<DB>
  clock: Clock
}

/** DNS templates: record sets that fill the zone of a newly ordered domain. */
export class DnsTemplatesService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock

  constructor(deps: DnsTemplatesServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
  }

  async list(accountId: number): Promise<{ id: number; alias: string; default: number }[]> {
    return (await repo.listTemplates(this.db, accountId)).map((t) => ({
      id: t.id,
      alias: t.alias,
      default: t.is_default,
    }))
  }

  async get(accountId: number, id: number): Promise<TemplateView> {
    const row = await repo.findTemplate(this.db, accountId, id)
    if (!row) throw errors.dnsTemplateNotFound()
    return { id: row.id, alias: row.alias, default: row.is_default, records: row.records }
  }

  /** A dry run answers id 0: the template is not stored. */
  async create(accountId: number, input: TemplateInput, opts: DryRun = {}): Promise<TemplateView> {
    const alias = (input.alias ?? '').trim()
    if (!alias) throw errors.dnsTemplateAliasMissing()
    const records = checkTemplateRecords(input.records ?? [])
    const isDefault = input.default ? 1 : 0
    if (opts.dryRun) return { id: 0, alias, default: isDefault, records }
    const id = await this.db.transaction().execute(async (trx) => {
      if (isDefault) await repo.clearDefault(trx, accountId)
      const { id } = await repo.insertTemplate(trx, {
        account_id: accountId,
        alias,
        is_default: isDefault,
        records: JSON.stringify(records),
        created_at: iso(this.clock.now()),
      })
      return id
    })
    return { id, alias, default: isDefault, records }
  }

  async update(accountId: number, id: number, input: TemplateInput, opts: DryRun = {}): Promise<TemplateView> {
    const current = await this.get(accountId, id)
    const alias = input.alias === undefined ? current.alias : input.alias.trim()
    if (!alias) throw errors.dnsTemplateAliasEmpty()
    const records = input.records === undefined ? current.records : checkTemplateRecords(input.records)
    const isDefault = input.default === undefined ? current.default : input.default ? 1 : 0
    if (opts.dryRun) return { id, alias, default: isDefault, records }
    await this.db.transaction().execute(async (trx) => {
      if (isDefault && !current.default) await repo.clearDefault(trx, accountId)
      await repo.updateTemplate(trx, accountId, id, {
        alias,
        is_default: isDefault,
        records: JSON.stringify(records),
        updated_at: iso(this.clock.now()),
      })
    })
    return { id, alias, default: isDefault, records }
  }

  async delete(accountId: number, id: number, opts: DryRun = {}): Promise<void> {
    await this.get(accountId, id)
    if (opts.dryRun) return
    await repo.deleteTemplate(this.db, accountId, id)
  }

  /** The template's records for `zone`, validated against it; a record that does not fit the zone is left out. */
  async recordsFor(accountId: number, id: number, zone: string): Promise<NormalisedRecord[]> {
    const template = await this.get(accountId, id)
    const out: NormalisedRecord[] = []
    for (const r of template.records) {
      try {
        out.push(normaliseRecord(zone, r))
      } catch {
        // Checked when the template was saved; a name that clashes with this particular zone is skipped.
      }
    }
    return checkRecordSet(zone, out)
  }
}

/** Validates template records (relative names only) and returns their stored form. */
export function checkTemplateRecords(input: TemplateRecordInput[]): TemplateRecord[] {
  const out: TemplateRecord[] = []
  for (const r of input) {
    const name = (r.name ?? '').trim().toLowerCase()
    const type = String(r.type ?? '')
      .trim()
      .toUpperCase()
    if (name.endsWith('.') || name.endsWith(`.${STAND_IN}`)) {
      throw errors.dnsTemplateNameNotRelative(`${type} ${name}`)
    }
    const value =
      r.priority !== undefined && r.priority !== null && (type === 'MX' || type === 'SRV')
        ? `${r.priority} ${r.value}`
        : r.value
    const n = normaliseRecord(STAND_IN, { type, name, value, ttl: r.ttl })
    out.push({ type: n.type, name: name === '@' ? '' : name, value: String(value).trim(), ttl: n.ttl })
  }
  checkRecordSet(
    STAND_IN,
    out.map((r) => normaliseRecord(STAND_IN, r)),
  )
  return out
}
