import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { DB } from '../../../db/tables.js'
import { isUniqueViolation } from '../../../db/errors.js'
import { errors } from '../../../errors.js'
import * as domainsRepo from '../domains.repository.js'
import { nextSerial, type ZoneChange } from '../../../lib/dns/zone-serial.js'
import type { ZoneChanges } from '../dns/zone-delivery.js'
import * as repo from './nameservers.repository.js'
import { managedDns, normaliseNameservers, type Nameserver, type NameserverInput } from './nameservers.js'
import type { DryRun } from '../../../lib/dry-run.js'

/** The alias of the provider's own nameservers, read-only, present in every account. */
export const BUILTIN_ALIAS = 'default-mijnhost'

const ALIAS = /^[a-z0-9._-]{1,64}$/

/** A nameserver profile as the API shows it. */
export interface NameserverProfileView {
  alias: string
  nameservers: Nameserver[]
  default: number
  readonly: number
}

/** The body of create and update. */
export interface NameserverProfileInput {
  alias?: string
  nameservers?: NameserverInput[]
  set_as_default?: boolean | number
}

/** What NameserversService is built on. */
export interface NameserversServiceDeps {
  db: Kysely<DB>
  clock: Clock
  defaultNameservers: string[]
  zones: ZoneChanges
}

/** Nameserver profiles: named nameserver sets a domain can use; the built-in one comes from the configuration. */
export class NameserversService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly defaultNameservers: string[]
  private readonly zones: ZoneChanges

  constructor(deps: NameserversServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.defaultNameservers = deps.defaultNameservers
    this.zones = deps.zones
  }

  /** The built-in profile. */
  builtin(): { alias: string; nameservers: Nameserver[] } {
    return {
      alias: BUILTIN_ALIAS,
      nameservers: this.defaultNameservers.map((hostname) => ({ hostname, ipv4: '', ipv6: '' })),
    }
  }

  /** The built-in profile first, then the account's own in the order they were made. */
  async list(accountId: number): Promise<NameserverProfileView[]> {
    const own = await repo.listProfiles(this.db, accountId)
    const hasDefault = own.some((p) => p.is_default === 1)
    return [
      { ...this.builtin(), default: hasDefault ? 0 : 1, readonly: 1 },
      ...own.map((p) => ({ alias: p.alias, nameservers: p.nameservers, default: p.is_default, readonly: 0 })),
    ]
  }

  /** One profile by alias: 400 `No nameserver alias set` for a blank alias, 404 `Nameservers name not found` when unknown. */
  async get(accountId: number, rawAlias: string): Promise<{ alias: string; nameservers: Nameserver[] }> {
    const alias = rawAlias.trim().toLowerCase()
    if (!alias) throw errors.noNameserverAlias()
    if (alias === BUILTIN_ALIAS) return this.builtin()
    const row = await repo.findProfile(this.db, accountId, alias)
    if (!row) throw errors.nameserversNotFound()
    return { alias: row.alias, nameservers: row.nameservers }
  }

  /** The profile an order or domain uses: the named one, else the account's default, else the built-in one. */
  async resolve(
    accountId: number,
    alias: string | null | undefined,
  ): Promise<{ alias: string; nameservers: Nameserver[] }> {
    if (alias) return this.get(accountId, alias)
    const def = await repo.findDefaultProfile(this.db, accountId)
    return def ? { alias: def.alias, nameservers: def.nameservers } : this.builtin()
  }

  async create(
    accountId: number,
    input: NameserverProfileInput,
    opts: DryRun = {},
  ): Promise<{ alias: string; nameservers: Nameserver[] }> {
    const alias = this.checkAlias(input.alias ?? '')
    const nameservers = normaliseNameservers(input.nameservers ?? [])
    if (opts.dryRun) {
      if (await repo.findProfile(this.db, accountId, alias)) throw errors.nameserverAliasTaken()
      return { alias, nameservers }
    }
    const now = iso(this.clock.now())
    try {
      await this.db.transaction().execute(async (trx) => {
        if (input.set_as_default) await repo.clearDefault(trx, accountId)
        await repo.insertProfile(trx, {
          account_id: accountId,
          alias,
          nameservers: JSON.stringify(nameservers),
          is_default: input.set_as_default ? 1 : 0,
          created_at: now,
          updated_at: now,
        })
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.nameserverAliasTaken()
      throw err
    }
    return { alias, nameservers }
  }

  /** Changes a profile; domains that use it get the new nameservers (and a new zone serial). */
  async update(
    accountId: number,
    rawAlias: string,
    input: NameserverProfileInput,
    opts: DryRun = {},
  ): Promise<{ alias: string; nameservers: Nameserver[] }> {
    const current = await this.own(accountId, rawAlias)
    const alias = input.alias === undefined ? current.alias : this.checkAlias(input.alias)
    const nameservers = input.nameservers === undefined ? current.nameservers : normaliseNameservers(input.nameservers)
    if (opts.dryRun) {
      if (alias !== current.alias && (await repo.findProfile(this.db, accountId, alias)))
        throw errors.nameserverAliasTaken()
      return { alias, nameservers }
    }
    const now = this.clock.now()
    let changed: ZoneChange[] = []
    try {
      changed = await this.db.transaction().execute(async (trx) => {
        if (input.set_as_default) await repo.clearDefault(trx, accountId)
        await repo.updateProfile(trx, accountId, current.id, {
          alias,
          nameservers: JSON.stringify(nameservers),
          ...(input.set_as_default === undefined ? {} : { is_default: input.set_as_default ? 1 : 0 }),
          updated_at: iso(now),
        })
        const domains = await domainsRepo.domainsUsingProfile(trx, accountId, current.alias)
        for (const d of domains) {
          await domainsRepo.updateDomain(trx, accountId, d.id, {
            nameservers: JSON.stringify(nameservers),
            nameserver_profile: alias,
            managed_dns: managedDns(nameservers, this.builtin().nameservers),
            zone_serial: nextSerial(d.zone_serial, now),
            updated_at: iso(now),
          })
        }
        const zones = domains.map((d): ZoneChange => ({ domain: d.name, kind: 'zone' }))
        for (const zone of zones) await this.zones.publish(trx, zone)
        return zones
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.nameserverAliasTaken()
      throw err
    }
    await this.zones.committed(...changed)
    return { alias, nameservers }
  }

  /** Deletes a profile; domains that used it keep their nameservers. */
  async delete(accountId: number, rawAlias: string, opts: DryRun = {}): Promise<void> {
    const current = await this.own(accountId, rawAlias)
    if (opts.dryRun) return
    const now = iso(this.clock.now())
    await this.db.transaction().execute(async (trx) => {
      for (const d of await domainsRepo.domainsUsingProfile(trx, accountId, current.alias)) {
        await domainsRepo.updateDomain(trx, accountId, d.id, { nameserver_profile: null, updated_at: now })
      }
      await repo.deleteProfile(trx, accountId, current.id)
    })
  }

  private async own(accountId: number, rawAlias: string) {
    const alias = rawAlias.trim().toLowerCase()
    if (!alias) throw errors.noNameserverAlias()
    if (alias === BUILTIN_ALIAS) throw errors.nameserverProfileReadOnly()
    const row = await repo.findProfile(this.db, accountId, alias)
    if (!row) throw errors.nameserversNotFound()
    return row
  }

  private checkAlias(raw: string): string {
    const alias = raw.trim().toLowerCase()
    if (!ALIAS.test(alias)) throw errors.invalidNameserverAlias()
    if (alias === BUILTIN_ALIAS) throw errors.nameserverAliasTaken()
    return alias
  }
}
