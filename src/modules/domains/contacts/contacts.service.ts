import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { DB } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import * as repo from './contacts.repository.js'
import type { DryRun } from '../../../lib/dry-run.js'

import { ROLES, type ContactFields, type ContactUse, type Role } from './contacts.types.js'
export { ROLES, type ContactFields, type ContactUse, type Role } from './contacts.types.js'

/** A contact profile as the API shows it. */
export interface ContactView {
  id: number
  name: string
  profile: ContactFields
}

/** The body of create and update: every field optional on update. */
export type ContactInput = {
  name?: string
  profile?: Partial<Omit<ContactFields, 'defaults'>> & { defaults?: Partial<Record<Role, boolean>> }
}

const REQUIRED = [
  'firstname',
  'lastname',
  'street',
  'street_number',
  'zipcode',
  'city',
  'country',
  'email',
  'phone_country',
  'phone_area',
  'phone_number',
] as const

/** What ContactsService is built on. */
export interface ContactsServiceDeps {
  db: Kysely<DB>
  clock: Clock
  /** Whether a domain uses a profile, asked before it is deleted (the domains area answers: domainContactUse). */
  use: ContactUse
}

/** Contact profiles (the handles of a domain): owner, admin, tech and billing contacts. */
export class ContactsService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly use: ContactUse

  constructor(deps: ContactsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.use = deps.use
  }

  async list(accountId: number): Promise<ContactView[]> {
    return (await repo.listContacts(this.db, accountId)).map(view)
  }

  async get(accountId: number, id: number): Promise<ContactView> {
    const row = await repo.findContact(this.db, accountId, id)
    if (!row) throw errors.contactNotFound()
    return view(row)
  }

  /** A dry run answers id 0: the profile is not stored. */
  async create(accountId: number, input: ContactInput, opts: DryRun = {}): Promise<ContactView> {
    const profile = complete(input.profile ?? {}, null)
    const name = input.name?.trim() || `${profile.firstname} ${profile.lastname}`
    if (opts.dryRun) return { id: 0, name, profile }
    const id = await this.db.transaction().execute(async (trx) => {
      const { id } = await repo.insertContact(trx, {
        account_id: accountId,
        name,
        profile: JSON.stringify(profile),
        created_at: iso(this.clock.now()),
      })
      await this.clearOtherDefaults(trx, accountId, id, profile.defaults)
      return id
    })
    return { id, name, profile }
  }

  /** Changes the given fields; the others stay as they are. */
  async update(accountId: number, id: number, input: ContactInput, opts: DryRun = {}): Promise<ContactView> {
    const current = await this.get(accountId, id)
    const profile = complete(input.profile ?? {}, current.profile)
    const name = input.name?.trim() || current.name
    if (opts.dryRun) return { id, name, profile }
    await this.db.transaction().execute(async (trx) => {
      await repo.updateContact(trx, accountId, id, {
        name,
        profile: JSON.stringify(profile),
        updated_at: iso(this.clock.now()),
      })
      await this.clearOtherDefaults(trx, accountId, id, profile.defaults)
    })
    return { id, name, profile }
  }

  /** Deletes a profile no domain uses. */
  async delete(accountId: number, id: number, opts: DryRun = {}): Promise<void> {
    await this.get(accountId, id)
    if (await this.use.usesContact(accountId, id)) throw errors.contactInUse()
    if (opts.dryRun) return
    await repo.deleteContact(this.db, accountId, id)
  }

  /** The contacts of a new domain: the ids given, each role without one taking the account's default for it. */
  async resolve(
    accountId: number,
    given: Partial<Record<Role, number | null>> = {},
  ): Promise<Partial<Record<Role, number>>> {
    const all = await repo.listContacts(this.db, accountId)
    const out: Partial<Record<Role, number>> = {}
    for (const role of ROLES) {
      const id = given[role]
      if (typeof id === 'number' && id > 0) {
        if (!all.some((c) => c.id === id)) throw errors.contactNotFound()
        out[role] = id
      } else {
        const def = all.find((c) => c.profile.defaults?.[role])
        if (def) out[role] = def.id
      }
    }
    return out
  }

  /** The handles of a domain's contacts, by role. */
  async handles(accountId: number, contacts: Partial<Record<Role, number>>) {
    const all = await repo.listContacts(this.db, accountId)
    const handle = (id: number | undefined) => {
      const c = all.find((x) => x.id === id)
      if (!c) return null
      return { handle_id: c.id, name: c.name, type: c.profile.company_name ? 'company' : 'person' }
    }
    return {
      owner: handle(contacts.owner),
      admin: handle(contacts.admin),
      tech: handle(contacts.tech),
      reseller: null,
      billing: handle(contacts.billing),
    }
  }

  private async clearOtherDefaults(
    trx: Parameters<typeof repo.listContacts>[0],
    accountId: number,
    id: number,
    defaults: Record<Role, boolean>,
  ) {
    const roles = ROLES.filter((r) => defaults[r])
    if (roles.length === 0) return
    for (const other of await repo.listContacts(trx, accountId)) {
      if (other.id === id) continue
      const p = other.profile
      if (!roles.some((r) => p.defaults?.[r])) continue
      for (const r of roles) p.defaults[r] = false
      await repo.updateContact(trx, accountId, other.id, {
        profile: JSON.stringify(p),
        updated_at: iso(this.clock.now()),
      })
    }
  }
}

function view(row: { id: number; name: string; profile: ContactFields }): ContactView {
  return { id: row.id, name: row.name, profile: row.profile }
}

/** Merges `input` over `base` and checks every required field is there. */
function complete(input: NonNullable<ContactInput['profile']>, base: ContactFields | null): ContactFields {
  const merged = { ...(base ?? {}), ...stripUndefined(input) } as ContactFields
  merged.defaults = {
    owner: false,
    admin: false,
    tech: false,
    billing: false,
    ...(base?.defaults ?? {}),
    ...stripUndefined(input.defaults ?? {}),
  }
  for (const field of REQUIRED) {
    const v = merged[field]
    if (typeof v !== 'string' || v.trim() === '') throw errors.contactFieldMissing(field)
  }
  merged.country = merged.country.toUpperCase()
  return merged
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
