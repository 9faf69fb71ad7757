import { randomBytes } from 'node:crypto'
import type { Clock } from '../../clock.js'
import { iso, ymd } from '../../clock.js'
import { isUniqueViolation } from '../../db/errors.js'
import { addYears, parseDomainName } from '../../lib/domain-name.js'
import { present } from '../../lib/invariant.js'
import * as repo from './builtin.repository.js'
import type { RegistryDb } from './builtin.repository.js'
import type { HeldNames, RegistryCheck, RegistryDnssecKey, RegistryDriver, RegistryResult } from './registry.js'

/** An auth code: 16 characters of letters, digits and a few symbols, as registries hand them out. */
function newAuthCode(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789#$%+-'
  return [...randomBytes(16)].map((b) => alphabet[b % alphabet.length]).join('')
}

/**
 * The registry that runs on one machine: its registrations live in `registry_domains`; names of this
 * service's domains (`held`, the port the context hands it) are taken; a configured list stands for names
 * registered elsewhere (transferable with their configured code); premium names and prices come from
 * `premium_names`; `reserved_names` are refused. Those three tables are its own, and its handle has no other.
 */
export class BuiltinRegistry implements RegistryDriver {
  private readonly external: Map<string, string | null>

  constructor(
    private readonly db: RegistryDb,
    private readonly clock: Clock,
    taken: { name: string; authCode: string | null }[],
    private readonly held: HeldNames,
  ) {
    this.external = new Map(taken.map((t) => [t.name, t.authCode]))
  }

  async check(raw: string): Promise<RegistryCheck> {
    const name = parseDomainName(raw)
    if (!name || name !== raw) return { status: 'invalid', premium: null }
    if (await this.isOurs(name)) return { status: 'unavailable', premium: null }
    if (await repo.isReserved(this.db, name)) return { status: 'unavailable', premium: null }
    if (this.external.has(name)) return { status: 'transfer', premium: null }
    const premium = await repo.premiumOf(this.db, name)
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
    const expiresOn = await repo.expiryMadeBy(this.db, name, requestId)
    return expiresOn === undefined ? null : { ok: true, expiresOn }
  }

  async renew(name: string, years: number): Promise<{ expiresOn: string }> {
    const row = await this.ensure(name)
    const expiresOn = addYears(row.expires_on, years)
    await repo.setExpiry(this.db, name, expiresOn, iso(this.clock.now()))
    return { expiresOn }
  }

  async cancel(name: string): Promise<void> {
    await repo.deleteRegistration(this.db, name)
  }

  async authCode(name: string): Promise<string> {
    return (await this.ensure(name)).auth_code
  }

  async setDnssec(name: string, keys: RegistryDnssecKey[]): Promise<void> {
    await this.ensure(name)
    await repo.setDnssecKeys(this.db, name, JSON.stringify(keys), iso(this.clock.now()))
  }

  async dnssec(name: string): Promise<RegistryDnssecKey[]> {
    const keys = await repo.dnssecKeysOf(this.db, name)
    return keys === undefined ? [] : (JSON.parse(keys) as RegistryDnssecKey[])
  }

  private async isOurs(name: string): Promise<boolean> {
    if (await repo.findRegistration(this.db, name)) return true
    return (await this.held.renewalDate(name)) !== null
  }

  private async insert(name: string, years: number, requestId?: string): Promise<RegistryResult> {
    const now = this.clock.now()
    const expiresOn = addYears(ymd(now), years)
    try {
      await repo.insertRegistration(this.db, {
        name,
        authCode: newAuthCode(),
        expiresOn,
        requestId: requestId ?? null,
        now: iso(now),
      })
    } catch (err) {
      if (isUniqueViolation(err))
        return { ok: false, code: 'unavailable', description: 'The domain is not available for registration' }
      throw err
    }
    return { ok: true, expiresOn }
  }

  /** The registration of a name this service holds; a domain added without the registry (demo data) gets one now. */
  private async ensure(name: string) {
    const row = await repo.findRegistration(this.db, name)
    if (row) return row
    const renewalDate = await this.held.renewalDate(name)
    if (renewalDate === null) throw new Error(`${name} is not registered with this registry`)
    const now = iso(this.clock.now())
    await repo.insertRegistrationIfAbsent(this.db, { name, authCode: newAuthCode(), expiresOn: renewalDate, now })
    return present(await repo.findRegistration(this.db, name), `the registration of ${name}`)
  }
}
