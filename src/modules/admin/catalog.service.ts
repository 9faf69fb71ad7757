import type { Kysely } from 'kysely'
import { present } from '../../lib/invariant.js'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { DomainNames } from '../../lib/domain-name.js'
import * as catalog from './catalog.repository.js'

const EXTENSION = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)?$/

/** What CatalogService is built on. */
export interface CatalogServiceDeps {
  db: Kysely<DB>
  clock: Clock
  /** Premium and reserved names are registrable names, as customers can order them. */
  names?: DomainNames
}

/** The operator's catalogue: the extensions on offer with their prices, premium names and reserved names. */
export class CatalogService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly names: DomainNames

  constructor(deps: CatalogServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.names = deps.names ?? new DomainNames()
  }

  /** Sets the prices (EUR cents, excluding VAT) and terms of an extension, adding it when it is not offered yet. */
  async setExtension(
    raw: string,
    input: {
      registerCents: number
      renewCents: number
      transferCents: number
      minPeriod?: number
      maxPeriod?: number
      supportsDnssec?: boolean
      supportsPrivacy?: boolean
      requiresAuthCode?: boolean
    },
  ): Promise<string> {
    const extension = raw.trim().toLowerCase().replace(/^\./, '')
    if (!EXTENSION.test(extension)) throw errors.adminInvalidExtension()
    const current = await catalog.findTld(this.db, extension)
    const minPeriod = input.minPeriod ?? current?.min_period ?? 1
    const maxPeriod = input.maxPeriod ?? current?.max_period ?? 10
    if (minPeriod > maxPeriod) throw errors.adminPeriodRange()
    const flag = (v: boolean | undefined, old: number | undefined, def: number) =>
      v === undefined ? (old ?? def) : v ? 1 : 0
    await catalog.upsertTld(this.db, {
      extension,
      register_cents: input.registerCents,
      renew_cents: input.renewCents,
      transfer_cents: input.transferCents,
      min_period: minPeriod,
      max_period: maxPeriod,
      supports_dnssec: flag(input.supportsDnssec, current?.supports_dnssec, 1),
      supports_privacy: flag(input.supportsPrivacy, current?.supports_privacy, 0),
      requires_auth_code: flag(input.requiresAuthCode, current?.requires_auth_code, 1),
    })
    return extension
  }

  /** Stops offering an extension (existing domains keep it). */
  async deleteExtension(raw: string): Promise<void> {
    if (!(await catalog.deleteTld(this.db, raw.trim().toLowerCase().replace(/^\./, ''))))
      throw errors.extensionNotFound()
  }

  async premiumNames() {
    return (await catalog.listPremium(this.db)).map((p) => ({
      name: p.name,
      register_price: p.register_cents / 100,
      renew_price: p.renew_cents / 100,
    }))
  }

  /** Makes a name premium at these prices (EUR cents, excluding VAT), or changes its prices. */
  async setPremium(raw: string, registerCents: number, renewCents: number) {
    const name = this.names.registrable(raw)
    if (!name) throw errors.invalidDomainName()
    await catalog.upsertPremium(this.db, { name, register_cents: registerCents, renew_cents: renewCents })
    return { name, register_price: registerCents / 100, renew_price: renewCents / 100 }
  }

  async deletePremium(raw: string): Promise<void> {
    if (!(await catalog.deletePremium(this.db, raw.trim().toLowerCase().replace(/\.$/, ''))))
      throw errors.adminPremiumNameNotFound()
  }

  reservedNames() {
    return catalog.listReserved(this.db)
  }

  /** Reserves a name: the built-in registry refuses to register it (availability says `unavailable`). */
  async reserve(raw: string, reason: string) {
    const name = this.names.registrable(raw)
    if (!name) throw errors.invalidDomainName()
    const created_at = iso(this.clock.now())
    await catalog.upsertReserved(this.db, { name, reason, created_at })
    return present(
      (await catalog.listReserved(this.db)).find((r) => r.name === name),
      `the reserved name ${name}`,
    )
  }

  async unreserve(raw: string): Promise<void> {
    if (!(await catalog.deleteReserved(this.db, raw.trim().toLowerCase().replace(/\.$/, ''))))
      throw errors.adminReservedNameNotFound()
  }
}
