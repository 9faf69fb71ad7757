import type { Kysely } from 'kysely'
import { present } from '../../lib/invariant.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { pageOf, pagination } from '../../lib/paging.js'
import type { IamService } from '../iam/iam.service.js'
import * as iamRepo from '../iam/iam.repository.js'
import { parsePermissions, type PermissionMap } from '../iam/permissions.js'
import * as repo from './admin.repository.js'
import { parseTime, permissionsOf, type PageInput } from './admin-input.js'

/** A new API key as the operator asks for it. */
export interface KeyInput {
  userId?: number
  label?: string
  expiresAt?: string | null
  allowedIps?: string[]
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

/** What AdminAccountsService is built on. */
export interface AdminAccountsServiceDeps {
  db: Kysely<DB>
  iam: IamService
}

/** The operator's side of accounts across tenants: the accounts, their users and API keys (through IamService). */
export class AdminAccountsService {
  private readonly db: Kysely<DB>
  private readonly iam: IamService

  constructor(deps: AdminAccountsServiceDeps) {
    this.db = deps.db
    this.iam = deps.iam
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
    const key = input.key
      ? await this.createKey(created.customerNumber, { ...input.key, userId: created.userId })
      : null
    return { ...(await this.getAccount(created.customerNumber)), api_key: key?.key ?? null }
  }

  async setSuspended(customerNumber: number, suspended: boolean) {
    const a = await this.accountRow(customerNumber)
    await repo.setAccountStatus(this.db, a.id, suspended ? 'suspended' : 'active')
    this.iam.invalidateAuthCache()
    return account({ ...a, status: suspended ? 'suspended' : 'active' })
  }

  async createUser(
    customerNumber: number,
    input: { email: string; firstname?: string; lastname?: string; permissions?: string[] | PermissionMap },
  ) {
    const a = await this.accountRow(customerNumber)
    const id = await this.iam.createSubUser(a.id, {
      email: input.email,
      firstname: input.firstname ?? '',
      lastname: input.lastname ?? '',
      permissions: permissionsOf(input.permissions),
    })
    return present(
      (await this.getAccount(customerNumber)).users.find((u) => u.id === id),
      `the new user ${id}`,
    )
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
    const row = present(
      (await iamRepo.listKeys(this.db, a.id)).find((k) => k.id === created.id),
      `the new API key ${created.id}`,
    )
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
}
