import type { Kysely } from 'kysely'
import type { DB } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import { pageOf, pagination } from '../../../lib/paging.js'
import type { TldPrice } from '../domains.tables.js'
import * as repo from './extensions.repository.js'

/** Cents as the API shows an extension price: a string with two decimals. */
export const priceString = (cents: number): string => (cents / 100).toFixed(2)

const summary = (t: TldPrice) => ({
  extension: t.extension,
  register_price: priceString(t.register_cents),
  renew_price: priceString(t.renew_cents),
  transfer_price: priceString(t.transfer_cents),
})

/** What ExtensionsService is built on. */
export interface ExtensionsServiceDeps {
  db: Kysely<DB>
}

/** The extensions (TLDs) on offer and their prices. */
export class ExtensionsService {
  private readonly db: Kysely<DB>

  constructor(deps: ExtensionsServiceDeps) {
    this.db = deps.db
  }

  async list(query: { page?: number; limit?: number; search?: string }) {
    const page = pageOf(query)
    const search = query.search?.trim().replace(/^\./, '') || undefined
    const { rows, total } = await repo.listExtensions(this.db, { search, offset: page.offset, limit: page.limit })
    return { extensions: rows.map(summary), pagination: pagination(page, total) }
  }

  /** One extension, written `com` or `.com`. */
  async get(raw: string) {
    const t = await this.find(raw)
    if (!t) throw errors.extensionNotFound()
    return {
      ...summary(t),
      min_period: t.min_period,
      max_period: t.max_period,
      supports_dnssec: t.supports_dnssec === 1,
      supports_privacy: t.supports_privacy === 1,
      requires_auth_code: t.requires_auth_code === 1,
      dnssec_allowed: t.supports_dnssec === 1,
      transfer_auth_code_required: t.requires_auth_code === 1,
    }
  }

  async find(raw: string): Promise<TldPrice | undefined> {
    const ext = raw.trim().toLowerCase().replace(/^\./, '')
    if (!ext) return undefined
    return repo.findExtension(this.db, ext)
  }

  /** The price row of the extension a domain name falls under (the longest offered suffix: `co.uk` before `uk`). */
  async forDomain(name: string): Promise<TldPrice | undefined> {
    const labels = name.split('.')
    for (let i = 1; i < labels.length; i++) {
      const t = await repo.findExtension(this.db, labels.slice(i).join('.'))
      if (t) return t
    }
    return undefined
  }
}
