import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { DB, User } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import { pageOf, pagination } from '../../../lib/paging.js'
import { IamService, type Principal } from '../../iam/iam.service.js'
import { parsePermissions, PERMISSIONS, permissionMap, type PermissionMap } from '../../iam/permissions.js'
import { hashPassword, passwordProblem } from './passwords.js'
import * as repo from './users.repository.js'
import type { DryRun } from '../../../lib/dry-run.js'

/** An account user as the API shows it. */
export interface UserView {
  id: number
  username: string
  email: string
  firstname: string
  lastname: string
  two_factor: boolean
  is_main_user: boolean
  permissions: PermissionMap
}

/** What `POST /account/users/` carries. */
export interface NewUserBody {
  email: string
  firstname: string
  lastname: string
  password: string
  password_confirm?: string
  permissions?: PermissionMap
}

/** What `PUT /account/users/{id}` carries. */
export interface UpdateUserBody {
  firstname?: string
  lastname?: string
  permissions?: PermissionMap
}

const HOUR_MS = 3600_000

/** What UsersService is built on. */
export interface UsersServiceDeps {
  db: Kysely<DB>
  clock: Clock
  iam: IamService
  opts: { newUsersPerHour: number }
}

/** Sub-users of an account and their permissions. */
export class UsersService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly iam: IamService
  private readonly opts: { newUsersPerHour: number }

  constructor(deps: UsersServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.iam = deps.iam
    this.opts = deps.opts
  }

  async list(accountId: number, query: { page?: number; limit?: number; search?: string }) {
    const page = pageOf(query)
    const total = await repo.countUsers(this.db, accountId, query.search)
    const pag = pagination(page, total)
    const rows = await repo.listUsers(this.db, accountId, {
      search: query.search,
      limit: page.limit,
      offset: page.offset,
    })
    return { users: rows.map(view), pagination: pag }
  }

  async get(accountId: number, userId: number): Promise<UserView> {
    const user = await this.iam.findUser(accountId, userId)
    if (!user) throw errors.userNotFound()
    return view(user)
  }

  /** Creates a sub-user with a hashed password; at most `newUsersPerHour` per account per hour. */
  async create(who: Principal, input: NewUserBody, opts: DryRun = {}): Promise<UserView> {
    if (input.password_confirm !== undefined && input.password_confirm !== input.password)
      throw errors.passwordMismatch()
    const weak = passwordProblem(input.password, input.email)
    if (weak) throw errors.weakPassword(weak)
    const permissions = permissionMap(false, input.permissions)
    this.checkGrants(who, permissionMap(false), permissions)
    const now = this.clock.now()
    const since = iso(new Date(now.getTime() - HOUR_MS))
    if ((await repo.countSubUsersCreatedSince(this.db, who.accountId, since)) >= this.opts.newUsersPerHour) {
      throw await this.tooMany(who.accountId, since, now)
    }
    if (opts.dryRun) {
      if (await repo.usernameTaken(this.db, who.accountId, input.email.trim().toLowerCase())) throw errors.emailTaken()
      return {
        id: 0,
        username: input.email.trim().toLowerCase(),
        email: input.email.trim(),
        firstname: input.firstname.trim(),
        lastname: input.lastname.trim(),
        two_factor: false,
        is_main_user: false,
        permissions: permissionMap(false, permissions),
      }
    }
    const id = await this.iam.createSubUser(who.accountId, {
      email: input.email.trim(),
      firstname: input.firstname.trim(),
      lastname: input.lastname.trim(),
      passwordHash: await hashPassword(input.password),
      permissions,
    })
    // Checked again after the insert: of concurrent requests, those past the limit by id order take their user back.
    if ((await repo.countSubUsersCreatedSince(this.db, who.accountId, since, id)) > this.opts.newUsersPerHour) {
      await repo.deleteUser(this.db, who.accountId, id)
      throw await this.tooMany(who.accountId, since, now)
    }
    return this.get(who.accountId, id)
  }

  /**
   * Changes names and replaces the permission set; the main user keeps every permission and is changed only by
   * the main user. A sub-user changes (grants or revokes) only permissions it holds itself.
   */
  async update(who: Principal, userId: number, input: UpdateUserBody, opts: DryRun = {}): Promise<UserView> {
    const user = await this.iam.findUser(who.accountId, userId)
    if (!user) throw errors.userNotFound()
    if (user.is_main_user === 1 && !who.isMainUser) throw errors.mainUserChangedByMainUserOnly()
    const changes: { firstname?: string; lastname?: string; permissions?: string } = {}
    if (input.firstname !== undefined) changes.firstname = input.firstname.trim()
    if (input.lastname !== undefined) changes.lastname = input.lastname.trim()
    const permissions = input.permissions
    if (permissions !== undefined) {
      if (user.is_main_user === 1) {
        if (PERMISSIONS.some((p) => Object.hasOwn(permissions, p) && permissions[p] === false))
          throw errors.mainUserPermissions()
        changes.permissions = JSON.stringify(permissionMap(true))
      } else {
        const wanted = permissionMap(false, permissions)
        this.checkGrants(who, parsePermissions(user.permissions), wanted)
        changes.permissions = JSON.stringify(wanted)
      }
    }
    if (opts.dryRun) return view({ ...user, ...changes })
    if (Object.keys(changes).length) await repo.updateUser(this.db, who.accountId, userId, changes)
    // The user's keys must see new permissions on their next request.
    if (changes.permissions !== undefined) this.iam.invalidateAuthCache()
    return this.get(who.accountId, userId)
  }

  private async tooMany(accountId: number, since: string, now: Date) {
    const oldest = await repo.oldestSubUserSince(this.db, accountId, since)
    const retry = oldest ? Math.max(1, Math.ceil((Date.parse(oldest) + HOUR_MS - now.getTime()) / 1000)) : 3600
    return errors.tooManyNewUsers(retry, this.opts.newUsersPerHour)
  }

  /**
   * A sub-user may not change a permission it does not hold itself: granting one it lacks, or revoking one it
   * lacks from another sub-user (the main user holds them all). `had` and `wanted` are full maps of known names.
   */
  private checkGrants(who: Principal, had: PermissionMap, wanted: PermissionMap): void {
    if (who.isMainUser) return
    for (const name of PERMISSIONS) {
      const before = had[name] === true
      const after = wanted[name] === true
      if (before === after || IamService.allows(who, name)) continue
      throw after ? errors.cannotGrantPermission(name) : errors.cannotRevokePermission(name)
    }
  }
}

function view(u: User): UserView {
  return {
    id: u.id,
    username: u.username,
    email: u.email,
    firstname: u.firstname,
    lastname: u.lastname,
    two_factor: u.two_factor === 1,
    is_main_user: u.is_main_user === 1,
    permissions: u.is_main_user === 1 ? permissionMap(true) : parsePermissions(u.permissions),
  }
}
