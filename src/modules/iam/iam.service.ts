import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { isUniqueViolation } from '../../db/errors.js'
import { errors } from '../../errors.js'
import * as repo from './iam.repository.js'
import { generateApiKey, hashApiKey, ipAllowed, keyPrefix, normaliseIpEntry } from './keys.js'
import { permissionMap, type PermissionMap } from './permissions.js'

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

const FIRST_CUSTOMER_NUMBER = 100001
const TOUCH_INTERVAL_MS = 60_000

/** Accounts, users, API keys and authentication. */
export class IamService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly opts: { emptyWhitelistAllowsAll: boolean },
  ) {}

  /** Creates an account with its main user (who holds every permission). */
  async createAccount(input: { name: string } & NewUserInput): Promise<{ accountId: number; customerNumber: number; userId: number }> {
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
        if (isUniqueViolation(err) && attempt < 5 && !(await this.usernameTaken(input.email))) continue
        if (isUniqueViolation(err)) throw errors.badRequest('A user with this e-mail address already exists')
        throw err
      }
    }
  }

  private async usernameTaken(email: string): Promise<boolean> {
    const row = await this.db.selectFrom('users').select('id').where('username', '=', email.toLowerCase()).executeTakeFirst()
    return row !== undefined
  }

  /** Creates a sub-user; permissions not given are false. */
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
      if (isUniqueViolation(err)) throw errors.badRequest('A user with this e-mail address already exists')
      throw err
    }
  }

  /** Creates an API key for a user of the account; the key is returned once and stored only as a hash. */
  async createKey(accountId: number, userId: number, input: NewKeyInput = {}): Promise<{ key: string; prefix: string; id: number }> {
    const user = await repo.findUser(this.db, accountId, userId)
    if (!user) throw errors.notFound('User not found')
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
      return { key, prefix: keyPrefix(key), id: row.id }
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.badRequest('This API key exists already')
      throw err
    }
  }

  normaliseWhitelist(entries: string[]): string[] {
    return entries.map((e) => {
      const n = normaliseIpEntry(e)
      if (n === null) throw errors.badRequest(`Invalid IP address or CIDR range: ${e}`)
      return n
    })
  }

  listKeys(accountId: number) {
    return repo.listKeys(this.db, accountId)
  }

  /** Finds one key of the account by its visible prefix or id. */
  async findKey(accountId: number, ref: string) {
    const keys = await repo.listKeys(this.db, accountId)
    const matches = keys.filter((k) => k.prefix === ref || String(k.id) === ref)
    if (matches.length !== 1) throw errors.notFound(matches.length ? 'Several keys match; use the key id' : 'API key not found')
    return matches[0]
  }

  async revokeKey(accountId: number, ref: string): Promise<void> {
    const key = await this.findKey(accountId, ref)
    await repo.updateKey(this.db, accountId, key.id, { revoked_at: iso(this.clock.now()) })
  }

  async setWhitelist(accountId: number, ref: string, entries: string[]): Promise<string[]> {
    const key = await this.findKey(accountId, ref)
    const allowed = this.normaliseWhitelist(entries)
    await repo.updateKey(this.db, accountId, key.id, { allowed_ips: JSON.stringify(allowed) })
    return allowed
  }

  async setExpiry(accountId: number, ref: string, expiresAt: Date | null): Promise<void> {
    const key = await this.findKey(accountId, ref)
    await repo.updateKey(this.db, accountId, key.id, { expires_at: expiresAt ? iso(expiresAt) : null })
  }

  /**
   * Resolves an API key presented by `ip` to a principal, or throws the matching 401:
   * missing/unknown/revoked → expired → IP not in the whitelist.
   */
  async authenticate(rawKey: string | undefined, ip: string): Promise<Principal> {
    if (!rawKey) throw errors.noValidApiKey()
    const row = await repo.findKeyForAuth(this.db, hashApiKey(rawKey))
    if (!row || row.revoked_at !== null || row.account_status !== 'active') throw errors.noValidApiKey()
    const now = this.clock.now()
    if (row.expires_at !== null && row.expires_at <= iso(now)) throw errors.apiKeyExpired()
    const allowed = JSON.parse(row.allowed_ips) as string[]
    if (!(allowed.length === 0 && this.opts.emptyWhitelistAllowsAll) && !ipAllowed(ip, allowed)) {
      throw errors.ipNotWhitelisted(ip)
    }
    if (row.last_used_at === null || now.getTime() - Date.parse(row.last_used_at) > TOUCH_INTERVAL_MS) {
      // Last use is recorded at most once a minute per key, so reads stay reads.
      await repo.touchKey(this.db, row.key_id, iso(now), ip)
    }
    return {
      accountId: row.account_id,
      customerNumber: row.customer_number,
      userId: row.user_id,
      isMainUser: row.is_main_user === 1,
      permissions: JSON.parse(row.permissions) as PermissionMap,
      keyId: row.key_id,
      keyPrefix: row.prefix,
    }
  }

  /** True when the principal may use the area (the main user may use every area). */
  static allows(who: Principal, area: string): boolean {
    return who.isMainUser || who.permissions[area] === true
  }
}
