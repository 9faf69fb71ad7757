import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { isUniqueViolation } from '../../db/errors.js'
import { pageOf, pagination } from '../../lib/paging.js'
import type { IamService } from '../iam/iam.service.js'
import * as iamRepo from '../iam/iam.repository.js'
import { generateApiKey, hashApiKey } from '../iam/keys.js'
import { isPermission, parsePermissions, permissionMap, type PermissionMap } from '../iam/permissions.js'
import { findJob, type DecodedJob } from '../../jobs/jobs.repository.js'
import * as repo from './admin.repository.js'
import * as catalog from './catalog.repository.js'
import { DomainNames } from '../../lib/domain-name.js'

/** Admin tokens start with this, so a token is recognisable in a config file (and never mistaken for an API key). */
export const ADMIN_TOKEN_PREFIX = 'adm_'
const VISIBLE = ADMIN_TOKEN_PREFIX.length + 8
const TOUCH_INTERVAL_MS = 60_000
const EXTENSION = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)?$/

export interface PageInput {
  page?: number
  limit?: number
}

export interface KeyInput {
  userId?: number
  label?: string
  expiresAt?: string | null
  allowedIps?: string[]
}

/** Parses `YYYY-MM-DD` (midnight UTC) or an ISO 8601 time; throws a 400 naming `field`. */
export function parseTime(text: string, field: string): Date {
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text)
  if (Number.isNaN(d.getTime())) throw errors.adminInvalidTime(field)
  return d
}

/** Permissions as a list of names or as a map; a name outside the specification's list is a 400. */
export function permissionsOf(input: string[] | PermissionMap | undefined): PermissionMap {
  if (!input) return {}
  const entries: [string, boolean][] = Array.isArray(input) ? input.map((p) => [p, true]) : Object.entries(input)
  for (const [name] of entries) if (!isPermission(name)) throw errors.unknownPermission(name)
  return permissionMap(false, Object.fromEntries(entries))
}

const account = (a: { id: number; customer_number: number; name: string; status: string; created_at: string }) => ({
  customer_number: a.customer_number,
  name: a.name,
  status: a.status,
  created_at: a.created_at,
})

const keyView = (k: Awaited<ReturnType<typeof iamRepo.listKeys>>[number]) => ({
  id: k.id,
  prefix: k.prefix,
  user_id: k.user_id,
  label: k.label,
  expires_at: k.expires_at,
  allowed_ips: k.allowed_ips,
  last_used_at: k.last_used_at,
  last_used_ip: k.last_used_ip,
  revoked_at: k.revoked_at,
  created_at: k.created_at,
})

/**
 * The operator's side: admin tokens, accounts across tenants, their users and keys (through IamService),
 * the audit log, the job queue and the mail outbox.
 */
export class AdminService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly iamOf: () => IamService,
    /** Premium and reserved names are registrable names, as customers can order them. */
    private readonly names: DomainNames = new DomainNames(),
  ) {}

  private get iam(): IamService {
    return this.iamOf()
  }

  /** Creates an admin token; it is returned once and stored only as a hash. */
  async createToken(label = ''): Promise<{ id: number; token: string; prefix: string }> {
    const token = `${ADMIN_TOKEN_PREFIX}${generateApiKey()}`
    const prefix = token.slice(0, VISIBLE)
    const row = await repo.insertToken(this.db, { token_hash: hashApiKey(token), prefix, label, created_at: iso(this.clock.now()) })
    return { id: row.id, token, prefix }
  }

  /** Makes a fixed token (HOSTAPI_ADMIN_TOKEN) valid, once; a revoked one stays revoked. */
  async ensureToken(token: string, label: string): Promise<void> {
    if (await repo.findTokenByHash(this.db, hashApiKey(token))) return
    try {
      await repo.insertToken(this.db, { token_hash: hashApiKey(token), prefix: token.slice(0, VISIBLE), label, created_at: iso(this.clock.now()) })
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
    if (match.length !== 1) throw errors.notFound('Admin token not found')
    await repo.revokeToken(this.db, match[0].id, iso(this.clock.now()))
  }

  /** Resolves a presented admin token, or throws 401 `No valid admin token set`. */
  async authenticate(raw: string | undefined): Promise<{ id: number; prefix: string }> {
    if (!raw || !raw.startsWith(ADMIN_TOKEN_PREFIX)) throw errors.noValidAdminToken()
    const row = await repo.findTokenByHash(this.db, hashApiKey(raw))
    if (!row || row.revoked_at !== null) throw errors.noValidAdminToken()
    const now = this.clock.now()
    if (row.last_used_at === null || now.getTime() - Date.parse(row.last_used_at) > TOUCH_INTERVAL_MS) {
      await repo.touchToken(this.db, row.id, iso(now))
    }
    return { id: row.id, prefix: row.prefix }
  }

  /** The account with this customer number, or 404 `Account not found`. */
  async accountRow(customerNumber: number) {
    const row = await iamRepo.findAccountByCustomerNumber(this.db, customerNumber)
    if (!row) throw errors.accountNotFound()
    return row
  }

  async listAccounts(query: PageInput & { search?: string; status?: string }) {
    const page = pageOf(query)
    const filter = { search: query.search, status: query.status }
    const total = await repo.countAccounts(this.db, filter)
    const pag = pagination(page, total)
    const rows = await repo.listAccounts(this.db, filter, page.limit, page.offset)
    return { accounts: rows.map(account), pagination: pag }
  }

  /** One account with its users and keys. */
  async getAccount(customerNumber: number) {
    const a = await this.accountRow(customerNumber)
    const users = await repo.listUsers(this.db, a.id)
    const keys = await iamRepo.listKeys(this.db, a.id)
    return {
      ...account(a),
      users: users.map((u) => ({
        id: u.id,
        username: u.username,
        email: u.email,
        firstname: u.firstname,
        lastname: u.lastname,
        is_main_user: u.is_main_user === 1,
        permissions: parsePermissions(u.permissions),
        created_at: u.created_at,
      })),
      keys: keys.map(keyView),
    }
  }

  /** Creates an account with its main user, and an API key for that user when `key` is given. */
  async createAccount(input: { name: string; email: string; firstname?: string; lastname?: string; key?: KeyInput }) {
    const created = await this.iam.createAccount({
      name: input.name,
      email: input.email,
      firstname: input.firstname ?? '',
      lastname: input.lastname ?? '',
    })
    const key = input.key ? await this.createKey(created.customerNumber, { ...input.key, userId: created.userId }) : null
    return { ...(await this.getAccount(created.customerNumber)), api_key: key?.key ?? null }
  }

  async setSuspended(customerNumber: number, suspended: boolean) {
    const a = await this.accountRow(customerNumber)
    await repo.setAccountStatus(this.db, a.id, suspended ? 'suspended' : 'active')
    this.iam.invalidateAuthCache()
    return account({ ...a, status: suspended ? 'suspended' : 'active' })
  }

  async createUser(customerNumber: number, input: { email: string; firstname?: string; lastname?: string; permissions?: string[] | PermissionMap }) {
    const a = await this.accountRow(customerNumber)
    const id = await this.iam.createSubUser(a.id, {
      email: input.email,
      firstname: input.firstname ?? '',
      lastname: input.lastname ?? '',
      permissions: permissionsOf(input.permissions),
    })
    return (await this.getAccount(customerNumber)).users.find((u) => u.id === id)!
  }

  /** Creates an API key for a user of the account (the main user when none is named); the key is in the answer once. */
  async createKey(customerNumber: number, input: KeyInput) {
    const a = await this.accountRow(customerNumber)
    let userId = input.userId
    if (userId === undefined) {
      const main = await iamRepo.findMainUser(this.db, a.id)
      if (!main) throw errors.userNotFound()
      userId = main.id
    }
    const created = await this.iam.createKey(a.id, userId, {
      label: input.label,
      expiresAt: input.expiresAt ? parseTime(input.expiresAt, 'expires_at') : null,
      allowedIps: input.allowedIps ?? [],
    })
    const row = (await iamRepo.listKeys(this.db, a.id)).find((k) => k.id === created.id)!
    return { ...keyView(row), key: created.key }
  }

  async listKeys(customerNumber: number) {
    const a = await this.accountRow(customerNumber)
    return (await iamRepo.listKeys(this.db, a.id)).map(keyView)
  }

  private async keyOf(accountId: number, ref: string) {
    const key = await this.iam.findKey(accountId, ref)
    return keyView(key)
  }

  async revokeKey(customerNumber: number, ref: string) {
    const a = await this.accountRow(customerNumber)
    await this.iam.revokeKey(a.id, ref)
    return this.keyOf(a.id, ref)
  }

  async setWhitelist(customerNumber: number, ref: string, entries: string[]) {
    const a = await this.accountRow(customerNumber)
    await this.iam.setWhitelist(a.id, ref, entries)
    return this.keyOf(a.id, ref)
  }

  async setExpiry(customerNumber: number, ref: string, expiresAt: string | null) {
    const a = await this.accountRow(customerNumber)
    await this.iam.setExpiry(a.id, ref, expiresAt === null ? null : parseTime(expiresAt, 'expires_at'))
    return this.keyOf(a.id, ref)
  }

  /** The audit log, newest first; `account` is a customer number (an unknown one matches nothing). */
  async audit(query: PageInput & { account?: number; key_prefix?: string; path?: string; status?: number; from?: string; to?: string }) {
    const page = pageOf(query)
    const filter: repo.AuditFilter = {
      keyPrefix: query.key_prefix,
      path: query.path,
      status: query.status,
      from: query.from ? iso(parseTime(query.from, 'from')) : undefined,
      to: query.to ? iso(parseTime(query.to, 'to')) : undefined,
    }
    if (query.account !== undefined) filter.accountId = (await iamRepo.findAccountByCustomerNumber(this.db, query.account))?.id ?? -1
    const total = await repo.countAudit(this.db, filter)
    const pag = pagination(page, total)
    const rows = await repo.listAudit(this.db, filter, page.limit, page.offset)
    return {
      entries: rows.map((r) => ({
        id: r.id,
        customer_number: r.customer_number ?? null,
        user_id: r.user_id,
        key_prefix: r.key_prefix,
        ip: r.ip,
        method: r.method,
        path: r.path,
        status: r.status,
        request_id: r.request_id,
        created_at: r.created_at,
      })),
      pagination: pag,
    }
  }

  async jobs(query: PageInput & { status?: string; kind?: string; account?: number }) {
    const page = pageOf(query)
    const filter: repo.JobFilter = { status: query.status, kind: query.kind }
    if (query.account !== undefined) filter.accountId = (await iamRepo.findAccountByCustomerNumber(this.db, query.account))?.id ?? -1
    const total = await repo.countJobs(this.db, filter)
    const pag = pagination(page, total)
    const rows = await repo.listJobs(this.db, filter, page.limit, page.offset)
    return { jobs: rows.map(jobView), pagination: pag }
  }

  async job(id: number) {
    const row = await findJob(this.db, id)
    if (!row) throw errors.adminJobNotFound()
    return jobView(row)
  }

  /** Queues a failed job again with fresh attempts. */
  async retryJob(id: number) {
    const job = await this.job(id)
    if (!(await repo.requeueFailedJob(this.db, id, iso(this.clock.now())))) throw errors.adminJobNotRetryable(job.status)
    return this.job(id)
  }

  async outbox(query: PageInput & { account?: number; recipient?: string; kind?: string }) {
    const page = pageOf(query)
    const filter: repo.OutboxFilter = { recipient: query.recipient, kind: query.kind }
    if (query.account !== undefined) filter.accountId = (await iamRepo.findAccountByCustomerNumber(this.db, query.account))?.id ?? -1
    const total = await repo.countOutbox(this.db, filter)
    const pag = pagination(page, total)
    const rows = await repo.listOutbox(this.db, filter, page.limit, page.offset)
    return { messages: rows.map(messageView), pagination: pag }
  }

  async message(id: number) {
    const row = await repo.findOutboxMessage(this.db, id)
    if (!row) throw errors.adminMessageNotFound()
    return messageView(row)
  }

  /** Sets the prices (EUR cents, excluding VAT) and terms of an extension, adding it when it is not offered yet. */
  async setExtension(raw: string, input: {
    registerCents: number; renewCents: number; transferCents: number
    minPeriod?: number; maxPeriod?: number; supportsDnssec?: boolean; supportsPrivacy?: boolean; requiresAuthCode?: boolean
  }): Promise<string> {
    const extension = raw.trim().toLowerCase().replace(/^\./, '')
    if (!EXTENSION.test(extension)) throw errors.badRequest('Invalid extension: labels of a-z, 0-9 and hyphens, such as com or co.uk')
    const current = await catalog.findTld(this.db, extension)
    const minPeriod = input.minPeriod ?? current?.min_period ?? 1
    const maxPeriod = input.maxPeriod ?? current?.max_period ?? 10
    if (minPeriod > maxPeriod) throw errors.badRequest('min_period must not be above max_period')
    const flag = (v: boolean | undefined, old: number | undefined, def: number) => (v === undefined ? (old ?? def) : v ? 1 : 0)
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
    if (!(await catalog.deleteTld(this.db, raw.trim().toLowerCase().replace(/^\./, '')))) throw errors.extensionNotFound()
  }

  async premiumNames() {
    return (await catalog.listPremium(this.db)).map((p) => ({ name: p.name, register_price: p.register_cents / 100, renew_price: p.renew_cents / 100 }))
  }

  /** Makes a name premium at these prices (EUR cents, excluding VAT), or changes its prices. */
  async setPremium(raw: string, registerCents: number, renewCents: number) {
    const name = this.names.registrable(raw)
    if (!name) throw errors.invalidDomainName()
    await catalog.upsertPremium(this.db, { name, register_cents: registerCents, renew_cents: renewCents })
    return { name, register_price: registerCents / 100, renew_price: renewCents / 100 }
  }

  async deletePremium(raw: string): Promise<void> {
    if (!(await catalog.deletePremium(this.db, raw.trim().toLowerCase().replace(/\.$/, '')))) throw errors.notFound('Premium name not found')
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
    return (await catalog.listReserved(this.db)).find((r) => r.name === name)!
  }

  async unreserve(raw: string): Promise<void> {
    if (!(await catalog.deleteReserved(this.db, raw.trim().toLowerCase().replace(/\.$/, '')))) throw errors.notFound('Reserved name not found')
  }

  /** Jobs per kind and status (for the metrics). */
  jobCounts() {
    return repo.jobCounts(this.db)
  }
}

function jobView(j: DecodedJob) {
  return {
    id: j.id,
    kind: j.kind,
    account_id: j.account_id,
    status: j.status,
    attempts: j.attempts,
    max_attempts: j.max_attempts,
    run_at: j.run_at,
    worker: j.locked_by,
    last_error: j.last_error,
    payload: j.payload,
    result: j.result,
    created_at: j.created_at,
    updated_at: j.updated_at,
    finished_at: j.finished_at,
  }
}

function messageView(m: { id: number; account_id: number | null; kind: string; sender: string; recipient: string; subject: string; text_body: string; html_body: string | null; created_at: string }) {
  return {
    id: m.id,
    account_id: m.account_id,
    kind: m.kind,
    from: m.sender,
    to: m.recipient,
    subject: m.subject,
    text_body: m.text_body,
    html_body: m.html_body,
    created_at: m.created_at,
  }
}
