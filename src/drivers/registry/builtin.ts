import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso, ymd } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { isUniqueViolation } from '../../db/errors.js'
import { addYears, parseDomainName } from '../../lib/domain-name.js'
import type { RegistryCheck, RegistryDnssecKey, RegistryDriver, RegistryResult } from './registry.js'

/** An auth code: 16 characters of letters, digits and a few symbols, as registries hand them out. */
function newAuthCode(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789#$%+-'
  return [...randomBytes(16)].map((b) => alphabet[b % alphabet.length]).join('')
}

/**
 * The registry that runs on one machine: its registrations live in `registry_domains`; names of this
 * service's domains are taken; a configured list stands for names registered elsewhere (transferable with
 * their configured code); premium names and prices come from `premium_names`; `reserved_names` are refused.
 */
export class BuiltinRegistry implements RegistryDriver {
  private readonly external: Map<string, string | null>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    taken: { name: string; authCode: string | null }[],
  ) {
    this.external = new Map(taken.map((t) => [t.name, t.authCode]))
  }

  async check(raw: string): Promise<RegistryCheck> {
    const name = parseDomainName(raw)
    if (!name || name !== raw) return { status: 'invalid', premium: null }
    if (await this.isOurs(name)) return { status: 'unavailable', premium: null }
    if (await this.db.selectFrom('reserved_names').select('id').where('name', '=', name).executeTakeFirst())
      return { status: 'unavailable', premium: null }
    if (this.external.has(name)) return { status: 'transfer', premium: null }
    const premium = await this.db
      .selectFrom('premium_names')
      .select(['register_cents', 'renew_cents'])
      .where('name', '=', name)
      .executeTakeFirst()
    return {
      status: 'available',
      premium: premium ? { registerCents: premium.register_cents, renewCents: premium.renew_cents } : null,
    }
  }

  async register(name: string, years: number, requestId?: string): Promise<RegistryResult> {
    const made = await this.madeBy(name, requestId)
    if (made) return made
    const check = await this.check(name)
    if (check.status !== 'available')
      return { ok: false, code: 'unavailable', description: 'The domain is not available for registration' }
    return this.insert(name, years, requestId)
  }

  async transfer(name: string, authCode: string | null, requestId?: string): Promise<RegistryResult> {
    const made = await this.madeBy(name, requestId)
    if (made) return made
    if (await this.isOurs(name))
      return { ok: false, code: 'unavailable', description: 'The domain is already registered with us' }
    if (!this.external.has(name))
      return {
        ok: false,
        code: 'transfer_not_possible',
        description: 'The domain is not registered elsewhere; register it instead',
      }
    const expected = this.external.get(name)
    if (!authCode || expected === null || authCode !== expected) {
      return {
        ok: false,
        code: 'transfer_code',
        description: authCode ? 'The transfer code is not correct' : 'No transfer code given',
      }
    }
    return this.insert(name, 1, requestId)
  }

  /** The registration `requestId` made of `name` before (its answer was lost), if it made one. */
  private async madeBy(name: string, requestId: string | undefined): Promise<RegistryResult | null> {
    if (!requestId) return null
    const row = await this.db
      .selectFrom('registry_domains')
      .select('expires_on')
      .where('name', '=', name)
      .where('request_id', '=', requestId)
      .executeTakeFirst()
    return row ? { ok: true, expiresOn: row.expires_on } : null
  }

  async renew(name: string, years: number): Promise<{ expiresOn: string }> {
    const row = await this.ensure(name)
    const expiresOn = addYears(row.expires_on, years)
    await this.db
      .updateTable('registry_domains')
      .set({ expires_on: expiresOn, updated_at: iso(this.clock.now()) })
      .where('name', '=', name)
      .execute()
    return { expiresOn }
  }

  async cancel(name: string): Promise<void> {
    await this.db.deleteFrom('registry_domains').where('name', '=', name).execute()
  }

  async authCode(name: string): Promise<string> {
    return (await this.ensure(name)).auth_code
  }

  async setDnssec(name: string, keys: RegistryDnssecKey[]): Promise<void> {
    await this.ensure(name)
    await this.db
      .updateTable('registry_domains')
      .set({ dnssec_keys: JSON.stringify(keys), updated_at: iso(this.clock.now()) })
      .where('name', '=', name)
      .execute()
  }

  async dnssec(name: string): Promise<RegistryDnssecKey[]> {
    const row = await this.db
      .selectFrom('registry_domains')
      .select('dnssec_keys')
      .where('name', '=', name)
      .executeTakeFirst()
    return row ? (JSON.parse(row.dnssec_keys) as RegistryDnssecKey[]) : []
  }

  private async isOurs(name: string): Promise<boolean> {
    const reg = await this.db.selectFrom('registry_domains').select('id').where('name', '=', name).executeTakeFirst()
    if (reg) return true
    const domain = await this.db.selectFrom('domains').select('id').where('name', '=', name).executeTakeFirst()
    return domain !== undefined
  }

  private async insert(name: string, years: number, requestId?: string): Promise<RegistryResult> {
    const now = this.clock.now()
    const expiresOn = addYears(ymd(now), years)
    try {
      await this.db
        .insertInto('registry_domains')
        .values({
          name,
          auth_code: newAuthCode(),
          expires_on: expiresOn,
          request_id: requestId ?? null,
          created_at: iso(now),
          updated_at: iso(now),
        })
        .execute()
    } catch (err) {
      if (isUniqueViolation(err))
        return { ok: false, code: 'unavailable', description: 'The domain is not available for registration' }
      throw err
    }
    return { ok: true, expiresOn }
  }

  /** The registration of a name this service holds; a domain added without the registry (demo data) gets one now. */
  private async ensure(name: string) {
    const row = await this.db.selectFrom('registry_domains').selectAll().where('name', '=', name).executeTakeFirst()
    if (row) return row
    const now = this.clock.now()
    const domain = await this.db
      .selectFrom('domains')
      .select('renewal_date')
      .where('name', '=', name)
      .executeTakeFirst()
    if (!domain) throw new Error(`${name} is not registered with this registry`)
    await this.db
      .insertInto('registry_domains')
      .values({
        name,
        auth_code: newAuthCode(),
        expires_on: domain.renewal_date,
        created_at: iso(now),
        updated_at: iso(now),
      })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
    return this.db.selectFrom('registry_domains').selectAll().where('name', '=', name).executeTakeFirstOrThrow()
  }
}
