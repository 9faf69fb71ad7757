import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { isUniqueViolation } from '../../db/errors.js'
import { errors } from '../../errors.js'
import * as repo from './iam.repository.js'
import type { InvalidationBus } from './auth-cache-bus.js'
import { generateApiKey, hashApiKey, ipAllowed, keyPrefix, normaliseIpEntry } from './keys.js'
import { parsePermissions, permissionMap, type PermissionMap } from './permissions.js'

/** Who is calling: resolved from the API key once per request. */
export interface Principal {
  accountId: number
  customerNumber: number
  userId: number
  isMainUser: boolean
  permissions: PermissionMap
  keyId: number
  keyPrefix: string
}

export interface NewUserInput {
  email: string
  firstname: string
  lastname: string
  passwordHash?: string | null
  permissions?: PermissionMap
}

export interface NewKeyInput {
  label?: string
  expiresAt?: Date | null
  allowedIps?: string[]
  /** A fixed key value (the demo key); otherwise a random one is generated. */
  key?: string
}

interface CachedKey {
  fetchedAt: number
  lastTouch: number
  usable: boolean
  expiresAt: number | null
  allowed: string[]
  principal: Principal
}

const AUTH_CACHE_SIZE = 10_000
const FIRST_CUSTOMER_NUMBER = 100001
const TOUCH_INTERVAL_MS = 60_000

/** What IamService is built on. */
export interface IamServiceDeps {
  db: Kysely<DB>
  clock: Clock
  opts: { emptyWhitelistAllowsAll: boolean; authCacheMs: number }
}

/** Accounts, users, API keys and authentication. */
export class IamService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly opts: { emptyWhitelistAllowsAll: boolean; authCacheMs: number }

  constructor(deps: IamServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.opts = deps.opts
  }

  /** Key lookups by the key as presented (so a cached key is not hashed again), parsed once; see Config.authCacheMs. */
  private readonly authCache = new Map<string, CachedKey>()
  /** The key reads on their way, by the key as presented. */
  private readonly keyReads = new Map<string, ReturnType<typeof repo.findKeyForAuth>>()

  private bus: InvalidationBus | null = null

  /**
   * Forgets every cached key lookup, here and (through the bus, when several instances share PostgreSQL) on
   * every other instance; every change to keys, users, permissions or accounts calls it.
   */
  invalidateAuthCache(): void {
    this.forgetKeys()
    this.bus?.publish().catch(() => {
      // Without the announcement the other instances still drop the lookup after authCacheMs.
    })
  }

  /** Connects the cache to the other instances; changes they announce clear this instance's cache. */
  useInvalidationBus(connect: (onChange: () => void) => Promise<InvalidationBus>): Promise<void> {
    return connect(() => this.forgetKeys()).then((bus) => {
      this.bus = bus
    })
  }

  async closeInvalidationBus(): Promise<void> {
    await this.bus?.close()
    this.bus = null
  }

  /** Drops the cached lookups, and the reads on their way (a request from now on reads again). */
  private forgetKeys(): void {
    this.authCache.clear()
    this.keyReads.clear()
  }

  private async lookupKey(
    rawKey: string,
    now: number,
    seen?: (dataVersion: string) => void,
  ): Promise<CachedKey | null> {
    const cached = this.authCache.get(rawKey)
    if (cached && now - cached.fetchedAt < this.opts.authCacheMs) return cached
    // With the cache on, the requests that find the lookup missing or expired while a read of the key is on its way
    // share that read: its answer is no older than a cached one may be. Only the request that made the read takes
    // the account's data version from it (a request that joined later may come after a write that read missed).
    let reading = this.opts.authCacheMs > 0 ? this.keyReads.get(rawKey) : undefined
    const joined = reading !== undefined
    if (!reading) {
      const read = repo.findKeyForAuth(this.db, hashApiKey(rawKey))
      reading = read
      if (this.opts.authCacheMs > 0) {
        this.keyReads.set(rawKey, read)
        void read
          .finally(() => {
            if (this.keyReads.get(rawKey) === read) this.keyReads.delete(rawKey)
          })
          .catch(() => undefined)
      }
    }
    const row = await reading
    if (!row) {
      this.authCache.delete(rawKey)
      return null
    }
    if (!joined) seen?.(row.data_version === null ? '0' : String(row.data_version))
    const entry: CachedKey = {
      fetchedAt: now,
      lastTouch: row.last_used_at === null ? 0 : Date.parse(row.last_used_at),
      usable: row.revoked_at === null && row.account_status === 'active',
      expiresAt: row.expires_at === null ? null : Date.parse(row.expires_at),
      allowed: row.allowed_ips,
      principal: {
        accountId: row.account_id,
        customerNumber: row.customer_number,
        userId: row.user_id,
        isMainUser: row.is_main_user === 1,
        permissions: parsePermissions(row.permissions),
        keyId: row.key_id,
        keyPrefix: row.prefix,
      },
    }
    if (this.opts.authCacheMs > 0) {
      if (this.authCache.size >= AUTH_CACHE_SIZE) this.authCache.clear()
      this.authCache.set(rawKey, entry)
    }
    return entry
  }

  /**
   * Creates an account with its main user (who holds every permission). Called by the operator only (admin API,
   * CLI, seeds): an e-mail address that is already another account's main user is refused, so every account has
   * an owner address of its own. Sub-users' addresses are unique per account only (see createSubUser).
   */
  async createAccount(
    input: { name: string } & NewUserInput,
  ): Promise<{ accountId: number; customerNumber: number; userId: number }> {
    if (await repo.findMainUserByUsername(this.db, input.email.toLowerCase())) throw errors.emailTaken()
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.transaction().execute(async (trx) => {
          const now = iso(this.clock.now())
          const max = await repo.maxCustomerNumber(trx)
          const account = await repo.insertAccount(trx, {
            customer_number: max === null ? FIRST_CUSTOMER_NUMBER : max + 1,
            name: input.name,
            created_at: now,
          })
          const user = await repo.insertUser(trx, {
            account_id: account.id,
            username: input.email.toLowerCase(),
            email: input.email,
            firstname: input.firstname,
            lastname: input.lastname,
            password_hash: input.passwordHash ?? null,
            is_main_user: 1,
            two_factor: 0,
            permissions: JSON.stringify(permissionMap(true)),
            created_at: now,
          })
          return { accountId: account.id, customerNumber: account.customer_number, userId: user.id }
        })
      } catch (err) {
        // Two instances may pick the same next customer number; the unique index decides, we retry.
        if (isUniqueViolation(err) && attempt < 5) continue
        throw err
      }
    }
  }

  /**
   * Creates a sub-user; permissions not given are false. The e-mail address (as the lower-cased username) is
   * unique within the account only: the answer never tells whether another account uses it.
   */
  async createSubUser(accountId: number, input: NewUserInput): Promise<number> {
    try {
      const user = await repo.insertUser(this.db, {
        account_id: accountId,
        username: input.email.toLowerCase(),
        email: input.email,
        firstname: input.firstname,
        lastname: input.lastname,
        password_hash: input.passwordHash ?? null,
        is_main_user: 0,
        two_factor: 0,
        permissions: JSON.stringify(permissionMap(false, input.permissions)),
        created_at: iso(this.clock.now()),
      })
      return user.id
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.emailTaken()
      throw err
    }
  }

  /** Creates an API key for a user of the account; the key is returned once and stored only as a hash. */
  async createKey(
    accountId: number,
    userId: number,
    input: NewKeyInput = {},
  ): Promise<{ key: string; prefix: string; id: number }> {
    const user = await repo.findUser(this.db, accountId, userId)
    if (!user) throw errors.userNotFound()
    const allowed = this.normaliseWhitelist(input.allowedIps ?? [])
    const key = input.key ?? generateApiKey()
    try {
      const row = await repo.insertKey(this.db, {
        account_id: accountId,
        user_id: userId,
        key_hash: hashApiKey(key),
        prefix: keyPrefix(key),
        label: input.label ?? '',
        expires_at: input.expiresAt ? iso(input.expiresAt) : null,
        allowed_ips: JSON.stringify(allowed),
        created_at: iso(this.clock.now()),
      })
      // No cache entry to clear: lookups of unknown keys are never cached.
      return { key, prefix: keyPrefix(key), id: row.id }
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.apiKeyExists()
      throw err
    }
  }

  normaliseWhitelist(entries: string[]): string[] {
    return entries.map((e) => {
      const n = normaliseIpEntry(e)
      if (n === null) throw errors.invalidIpEntry(e)
      return n
    })
  }

  listKeys(accountId: number) {
    return repo.listKeys(this.db, accountId)
  }

  /** The account with this id, if it exists. */
  findAccount(accountId: number) {
    return repo.findAccount(this.db, accountId)
  }

  /** One user of the account, if it exists. */
  findUser(accountId: number, userId: number) {
    return repo.findUser(this.db, accountId, userId)
  }

  /** Finds one key of the account by its visible prefix or id. */
  async findKey(accountId: number, ref: string) {
    const keys = await repo.listKeys(this.db, accountId)
    const matches = keys.filter((k) => k.prefix === ref || String(k.id) === ref)
    if (matches.length !== 1) throw matches.length ? errors.apiKeyAmbiguous() : errors.apiKeyNotFound()
    return matches[0]
  }

  async revokeKey(accountId: number, ref: string): Promise<void> {
    const key = await this.findKey(accountId, ref)
    await repo.updateKey(this.db, accountId, key.id, { revoked_at: iso(this.clock.now()) })
    this.invalidateAuthCache()
  }

  async setWhitelist(accountId: number, ref: string, entries: string[]): Promise<string[]> {
    const key = await this.findKey(accountId, ref)
    const allowed = this.normaliseWhitelist(entries)
    await repo.updateKey(this.db, accountId, key.id, { allowed_ips: JSON.stringify(allowed) })
    this.invalidateAuthCache()
    return allowed
  }

  async setExpiry(accountId: number, ref: string, expiresAt: Date | null): Promise<void> {
    const key = await this.findKey(accountId, ref)
    await repo.updateKey(this.db, accountId, key.id, { expires_at: expiresAt ? iso(expiresAt) : null })
    this.invalidateAuthCache()
  }

  /**
   * Resolves an API key presented by `ip` to a principal, or throws the matching 401:
   * missing/unknown/revoked → expired → IP not in the whitelist. When the key was read from the database (not
   * from the cache), `seen` gets the account's data version read with it.
   */
  async authenticate(rawKey: string | undefined, ip: string, seen?: (dataVersion: string) => void): Promise<Principal> {
    if (!rawKey) throw errors.noValidApiKey()
    const now = this.clock.now()
    const key = await this.lookupKey(rawKey, now.getTime(), seen)
    if (!key?.usable) throw errors.noValidApiKey()
    if (key.expiresAt !== null && key.expiresAt <= now.getTime()) throw errors.apiKeyExpired()
    if (!this.ipAdmitted(key, ip)) throw errors.ipNotWhitelisted(ip)
    if (now.getTime() - key.lastTouch > TOUCH_INTERVAL_MS) {
      // Last use is recorded at most once a minute per key, so reads stay reads.
      key.lastTouch = now.getTime()
      await repo.touchKey(this.db, key.principal.keyId, iso(now), ip)
    }
    return key.principal
  }

  /**
   * What `authenticate` answers, when it can be told without waiting: the key's lookup is cached and fresh, the key
   * is usable from `ip`, and its last use was recorded less than a minute ago. Null otherwise (`authenticate` then
   * reads, records or refuses).
   */
  cachedPrincipal(rawKey: string, ip: string): Principal | null {
    const key = this.authCache.get(rawKey)
    if (!key?.usable) return null
    const now = this.clock.now().getTime()
    if (now - key.fetchedAt >= this.opts.authCacheMs || now - key.lastTouch > TOUCH_INTERVAL_MS) return null
    if (key.expiresAt !== null && key.expiresAt <= now) return null
    return this.ipAdmitted(key, ip) ? key.principal : null
  }

  private ipAdmitted(key: CachedKey, ip: string): boolean {
    return (key.allowed.length === 0 && this.opts.emptyWhitelistAllowsAll) || ipAllowed(ip, key.allowed)
  }

  /** True when the principal may use the area (the main user may use every area). */
  static allows(who: Principal, area: string): boolean {
    return who.isMainUser || who.permissions[area] === true
  }
}
