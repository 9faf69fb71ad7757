import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { isUniqueViolation } from '../../db/errors.js'
import { generateApiKey, hashApiKey } from '../iam/keys.js'
import * as repo from './admin.repository.js'

/** Admin tokens start with this, so a token is recognisable in a config file (and never mistaken for an API key). */
export const ADMIN_TOKEN_PREFIX = 'adm_'
const VISIBLE = ADMIN_TOKEN_PREFIX.length + 8
const TOUCH_INTERVAL_MS = 60_000

/** What AdminService is built on. */
export interface AdminServiceDeps {
  db: Kysely<DB>
  clock: Clock
}

/** Admin tokens: created, made valid from the configuration, listed, revoked, checked on every admin request. */
export class AdminService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock

  constructor(deps: AdminServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
  }

  /** Creates an admin token; it is returned once and stored only as a hash. */
  async createToken(label = ''): Promise<{ id: number; token: string; prefix: string }> {
    const token = `${ADMIN_TOKEN_PREFIX}${generateApiKey()}`
    const prefix = token.slice(0, VISIBLE)
    const row = await repo.insertToken(this.db, {
      token_hash: hashApiKey(token),
      prefix,
      label,
      created_at: iso(this.clock.now()),
    })
    return { id: row.id, token, prefix }
  }

  /** Makes a fixed token (HOSTAPI_ADMIN_TOKEN) valid, once; a revoked one stays revoked. */
  async ensureToken(token: string, label: string): Promise<void> {
    if (await repo.findTokenByHash(this.db, hashApiKey(token))) return
    try {
      await repo.insertToken(this.db, {
        token_hash: hashApiKey(token),
        prefix: token.slice(0, VISIBLE),
        label,
        created_at: iso(this.clock.now()),
      })
    } catch (err) {
      // Another instance starting at the same time stored it first.
      if (!isUniqueViolation(err)) throw err
    }
  }

  listTokens() {
    return repo.listTokens(this.db)
  }

  async revokeToken(ref: string): Promise<void> {
    const match = (await repo.listTokens(this.db)).filter((t) => t.prefix === ref || String(t.id) === ref)
    if (match.length !== 1) throw errors.adminTokenNotFound()
    await repo.revokeToken(this.db, match[0].id, iso(this.clock.now()))
  }

  /** Resolves a presented admin token, or throws 401 `No valid admin token set`. */
  async authenticate(raw: string | undefined): Promise<{ id: number; prefix: string }> {
    if (!raw?.startsWith(ADMIN_TOKEN_PREFIX)) throw errors.noValidAdminToken()
    const row = await repo.findTokenByHash(this.db, hashApiKey(raw))
    if (!row || row.revoked_at !== null) throw errors.noValidAdminToken()
    const now = this.clock.now()
    if (row.last_used_at === null || now.getTime() - Date.parse(row.last_used_at) > TOUCH_INTERVAL_MS) {
      await repo.touchToken(this.db, row.id, iso(now))
    }
    return { id: row.id, prefix: row.prefix }
  }
}
