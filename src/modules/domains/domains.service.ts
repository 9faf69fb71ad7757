import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso, ymd } from '../../clock.js'
import type { Db } from '../../db/database.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import { crashPoint } from '../../ops/crash-points.js'
import type { RegistryDnssecKey, RegistryDriver } from '../../drivers/registry/registry.js'
import { DIGEST_SHA256, DNSKEY_PROTOCOL, delegationKey } from '../../lib/dns/dnssec.js'
import { type DnssecInput, type DnssecKey, dnssecIntent, givenDnssecKey } from './dnssec/dnssec-input.js'
import type { ZoneKeys } from './dnssec/zone-keys.js'
import { pageOf, pagination } from '../../lib/paging.js'
import { jsonObjectOf, jsonTextOf } from '../../lib/json-text.js'
import type { ContactsService, Role } from './contacts/contacts.service.js'
import type { NameserversService } from './nameservers/nameservers.service.js'
import { managedDns, normaliseNameservers, type Nameserver, type NameserverInput } from './nameservers/nameservers.js'
import { DomainNames, parseDomainName } from '../../lib/domain-name.js'
import * as repo from './domains.repository.js'
import { emitEvent } from '../webhooks/webhook-events.js'
import { statusEvent } from './domain-events.js'
import { decodeDomain, type Domain } from './domains.repository.js'
import { nextSerial, type ZoneChange } from '../../lib/dns/zone-serial.js'
import type { ZoneChanges } from './dns/zone-delivery.js'
import type { DryRun } from '../../lib/dry-run.js'
import { present } from '../../lib/invariant.js'

/** The job that ends a cancelled domain at its renewal date. */
export const END_JOB = 'domains.end'

/** Domain states: `status` text and its `status_id`. */
export const STATUS = {
  active: { status: 'active', id: 1 },
  pendingCancellation: { status: 'pending_cancellation', id: 2 },
} as const

const TAG = /^[a-z0-9._-]{1,64}$/

/** The body of `PUT /domains/{domain}`. */
export interface DomainUpdate {
  nameserver?: string
  nameservers?: NameserverInput[]
  is_locked?: boolean | number
  dnssec?: DnssecInput
  profile?: Partial<Record<Role, number | null>>
  forwarder?: { enabled?: boolean | number; type?: number; url?: string }
  tags?: string[]
}

/** What the order processor hands over to create a domain. */
export interface NewDomain {
  accountId: number
  name: string
  renewalDate: string
  nameserverProfile: string | null
  nameservers: Nameserver[]
  contacts: Partial<Record<Role, number>>
}

/** What DomainsService is built on. */
export interface DomainsServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  registry: RegistryDriver
  nameservers: NameserversService
  contacts: ContactsService
  zones: ZoneChanges
  /** The signing keys of the zones served here with DNSSEC on. */
  zoneKeys: ZoneKeys
  /** The registrable-name rules (public suffixes, the operator's private ones). */
  names?: DomainNames
}

/** Domains of an account: list, detail, settings, cancellation, auth codes; the zone serial of every change. */
export class DomainsService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly registry: RegistryDriver
  private readonly nameservers: NameserversService
  private readonly contacts: ContactsService
  private readonly zones: ZoneChanges
  private readonly zoneKeys: ZoneKeys
  readonly names: DomainNames

  constructor(deps: DomainsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.registry = deps.registry
    this.nameservers = deps.nameservers
    this.contacts = deps.contacts
    this.zones = deps.zones
    this.zoneKeys = deps.zoneKeys
    this.names = deps.names ?? new DomainNames()
  }

  /** The job that ends a cancelled domain at its renewal date. */
  readonly endJob = defineJob({
    name: END_JOB,
    payload: Type.Object({ domainId: Type.Integer() }),
    handle: ({ domainId }) => this.endDomain(domainId),
  })

  /** The domain `raw` of the account: 400 `Invalid domain name` for bad syntax, 400 `You have no access to this resource` otherwise. */
  async requireOwned(accountId: number, raw: string, db: Db = this.db): Promise<Domain> {
    const name = parseDomainName(raw)
    if (!name) throw errors.invalidDomainName()
    const domain = await repo.findOwned(db, accountId, name)
    if (!domain) throw errors.noAccessToResource()
    return domain
  }

  /** The domain `name` (already normalised) when the account holds it; `db` may be a transaction. */
  find(accountId: number, name: string, db: Db = this.db): Promise<Domain | undefined> {
    return repo.findOwned(db, accountId, name)
  }

  /** A domain by id alone: only for jobs, which carry the id they were given. */
  findForJob(domainId: number): Promise<Domain | undefined> {
    return repo.findById(this.db, domainId)
  }

  /** Moves the renewal date of one of the account's domains (a renewal at the registry). */
  async setRenewalDate(trx: Db, accountId: number, domainId: number, renewalDate: string): Promise<void> {
    const changes = { renewal_date: renewalDate, updated_at: iso(this.clock.now()) }
    await repo.updateDomain(trx, accountId, domainId, changes)
  }

  /**
   * The `data` of `GET /domains` as JSON text: the account's domains by id; `tags` keeps those with any of the
   * tags; paged only when `page` or `limit` is given. One statement builds it (listDomainsJson).
   */
  async list(accountId: number, query: { tags?: string; search?: string; page?: number; limit?: number }) {
    const tags = (query.tags ?? '')
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean)
    const page = query.page === undefined && query.limit === undefined ? null : pageOf(query)
    const search = query.search?.trim() || undefined
    const { total, items } = await repo.listDomainsJson(this.db, accountId, { search, tags, window: page })
    if (!page) return jsonObjectOf([['domains', items]])
    return jsonObjectOf([
      ['domains', items],
      ['pagination', jsonTextOf(pagination(page, total))],
    ])
  }

  /** Everything about one domain. */
  async detail(accountId: number, raw: string) {
    const d = await this.requireOwned(accountId, raw)
    return this.view(d)
  }

  async view(d: Domain) {
    const { contacts, nameservers } = d
    const messages: string[] = []
    if (d.status === STATUS.pendingCancellation.status && d.cancel_at)
      messages.push(`Cancellation pending: the domain ends on ${d.cancel_at}`)
    if (!d.is_locked) messages.push('The domain is not locked against transfers')
    return {
      id: d.id,
      domain: d.name,
      renewal_date: d.renewal_date,
      status: d.status,
      status_id: d.status_id,
      cancellation_date: d.cancel_at,
      tags: d.tags,
      nameserver_profile: d.nameserver_profile,
      nameservers: nameservers.map((n) => n.hostname),
      nameserver_details: nameservers,
      dnssec_enabled: d.dnssec_enabled,
      // Key numbers as strings: the API's generated clients declare them so.
      dnssec_keys: d.dnssec_keys.map((k) => ({ alg: k.alg, flags: k.flags, pubKey: k.pubKey })),
      forwarder: d.forwarder,
      forwarder_enabled: d.forwarder_enabled === 1,
      forwarder_blocked_by_hosting: false,
      is_lockable: true,
      is_locked: d.is_locked === 1,
      managed_dns: d.managed_dns === 1,
      whitelabel_ns: false,
      handles: await this.contacts.handles(d.account_id, contacts),
      messages,
    }
  }

  /** Changes the fields given; the others stay as they are. Nameserver and DNSSEC changes republish the zone. */
  async update(accountId: number, raw: string, input: DomainUpdate, opts: DryRun = {}) {
    const d = await this.requireOwned(accountId, raw)
    const changes: Parameters<typeof repo.updateDomain>[3] = {}
    let zoneChanged = false

    if (input.nameserver !== undefined && input.nameservers !== undefined) throw errors.nameserverXorProfile()
    if (input.nameserver !== undefined) {
      const profile = await this.nameservers.get(accountId, input.nameserver)
      changes.nameservers = JSON.stringify(profile.nameservers)
      changes.nameserver_profile = profile.alias
      changes.managed_dns = this.managedBy(profile.nameservers)
      zoneChanged = true
    } else if (input.nameservers !== undefined) {
      const list = normaliseNameservers(input.nameservers)
      changes.nameservers = JSON.stringify(list)
      changes.nameserver_profile = null
      changes.managed_dns = this.managedBy(list)
      zoneChanged = true
    }
    if (input.is_locked !== undefined) changes.is_locked = input.is_locked ? 1 : 0
    // DNSSEC of a zone served here is signed here with a key hostapi makes; for other nameservers the key is given.
    // A change of who serves the zone turns it off unless the request sets it: the old keys no longer fit.
    const managed = changes.managed_dns ?? d.managed_dns
    let dnssec: 'sign' | 'off' | DnssecKey[] | null = null
    const given = input.dnssec
    const intent = given === undefined ? 'unchanged' : dnssecIntent(given)
    if (intent === 'off') dnssec = 'off'
    else if (intent === 'on' && given !== undefined) dnssec = managed ? 'sign' : [givenDnssecKey(given)]
    else if (changes.managed_dns !== undefined && changes.managed_dns !== d.managed_dns && d.dnssec_enabled) {
      dnssec = 'off'
    }
    const zoneKey = dnssec === 'sign' ? await this.zoneKeys.find(d.id) : undefined
    if (dnssec !== null) {
      const keys = Array.isArray(dnssec) ? dnssec : zoneKey ? [dnssecKeyOf(zoneKey)] : []
      changes.dnssec_enabled = dnssec === 'off' ? 0 : 1
      changes.dnssec_keys = JSON.stringify(keys)
      zoneChanged = true
    }
    if (input.profile !== undefined) {
      const current = d.contacts
      const given = await this.contacts.resolve(
        accountId,
        Object.fromEntries(Object.entries(input.profile).filter(([, v]) => typeof v === 'number' && v > 0)),
      )
      const next = { ...current }
      // A role given as 0 or null loses its contact; roles left out keep theirs.
      for (const [role, id] of Object.entries(input.profile) as [Role, number | null | undefined][]) {
        if (typeof id === 'number' && id > 0) next[role] = given[role]
        else if (id !== undefined) delete next[role]
      }
      changes.contacts = JSON.stringify(next)
    }
    if (input.forwarder !== undefined) {
      const f = forwarderOf(input.forwarder, d.forwarder)
      changes.forwarder = f.forwarder ? JSON.stringify(f.forwarder) : null
      changes.forwarder_enabled = f.enabled
    }
    if (input.tags !== undefined) {
      for (const tag of input.tags) if (!TAG.test(tag)) throw errors.invalidTag(tag)
      changes.tags = JSON.stringify([...new Set(input.tags)])
    }

    if (opts.dryRun) return this.view({ ...d, ...decodeDomain(changes) })
    const now = this.clock.now()
    const zone: ZoneChange = { domain: d.name, kind: 'zone' }
    if (Object.keys(changes).length > 0) {
      await this.db.transaction().execute(async (trx) => {
        if (dnssec === 'sign' && !zoneKey)
          changes.dnssec_keys = JSON.stringify([dnssecKeyOf(await this.zoneKeys.create(d.id, trx))])
        else if (dnssec !== null && dnssec !== 'sign') await this.zoneKeys.remove(d.id, trx)
        await repo.updateDomain(trx, accountId, d.id, {
          ...changes,
          ...(zoneChanged ? { zone_serial: nextSerial(d.zone_serial, now) } : {}),
          updated_at: iso(now),
        })
        if (zoneChanged) await this.zones.publish(trx, zone)
      })
    }
    if (zoneChanged) await this.zones.committed(zone)
    if (dnssec !== null) {
      const keys = JSON.parse(present(changes.dnssec_keys, 'the DNSSEC keys of the change')) as DnssecKey[]
      await this.registry.setDnssec(
        d.name,
        keys.map((k) => registryKey(d.name, k)),
      )
    }
    return this.view(present(await repo.findOwned(this.db, accountId, d.name), `domain ${d.name} just updated`))
  }

  /** Marks the domain for cancellation at its renewal date; a job ends it then. */
  async cancel(accountId: number, raw: string, opts: DryRun = {}): Promise<{ cancellationDate: string }> {
    const d = await this.requireOwned(accountId, raw)
    if (d.status === STATUS.pendingCancellation.status) throw errors.cancellationPending()
    if (opts.dryRun) return { cancellationDate: d.renewal_date }
    const now = this.clock.now()
    await this.db.transaction().execute(async (trx) => {
      await repo.updateDomain(trx, accountId, d.id, {
        status: STATUS.pendingCancellation.status,
        status_id: STATUS.pendingCancellation.id,
        cancel_at: d.renewal_date,
        updated_at: iso(now),
      })
      await emitEvent(trx, accountId, 'domain.status.changed', statusEvent(d, STATUS.pendingCancellation), now)
      const runAt = new Date(`${d.renewal_date}T00:00:00.000Z`)
      await this.jobs.enqueue(this.endJob, { domainId: d.id }, { trx, accountId, runAt: runAt > now ? runAt : now })
    })
    crashPoint('domains.cancel.committed')
    this.jobs.poke()
    return { cancellationDate: d.renewal_date }
  }

  /** Withdraws a pending cancellation. */
  async cancelDelete(accountId: number, raw: string, opts: DryRun = {}): Promise<void> {
    const d = await this.requireOwned(accountId, raw)
    if (d.status !== STATUS.pendingCancellation.status) throw errors.noPendingCancellation()
    if (opts.dryRun) return
    const now = this.clock.now()
    await this.db.transaction().execute(async (trx) => {
      await repo.updateDomain(trx, accountId, d.id, {
        status: STATUS.active.status,
        status_id: STATUS.active.id,
        cancel_at: null,
        updated_at: iso(now),
      })
      await emitEvent(trx, accountId, 'domain.status.changed', statusEvent(d, STATUS.active), now)
    })
  }

  /** The transfer (auth) code; a locked domain gives none out. */
  async authCode(accountId: number, raw: string): Promise<string> {
    const d = await this.requireOwned(accountId, raw)
    if (d.is_locked) throw errors.domainLocked()
    return this.registry.authCode(d.name)
  }

  /** The job: ends a domain whose cancellation is (still) pending and due. */
  async endDomain(domainId: number): Promise<{ ended: boolean }> {
    const d = await repo.findById(this.db, domainId)
    if (!d || d.status !== STATUS.pendingCancellation.status || !d.cancel_at || d.cancel_at > ymd(this.clock.now()))
      return { ended: false }
    await this.registry.cancel(d.name)
    const removed: ZoneChange = { domain: d.name, kind: 'removed' }
    await this.db.transaction().execute(async (trx) => {
      await repo.deleteDomain(trx, d.id)
      const ended = statusEvent(d, { status: 'deleted', id: 0 })
      await emitEvent(trx, d.account_id, 'domain.status.changed', ended, this.clock.now())
      await this.zones.publish(trx, removed)
    })
    await this.zones.committed(removed)
    return { ended: true }
  }

  /**
   * The domains of any account whose zone is `name`, above it or below it: a name is orderable only when there
   * are none. (Only registrable names are allowed, so overlaps come from bad data or a changed suffix list.)
   */
  overlapping(name: string, db: Db = this.db) {
    return repo.findOverlapping(db, name)
  }

  /**
   * Creates an active domain (the order processor, demo data and seed files call this); returns its id.
   * 400 `Invalid domain name` for a name that is not registrable; 400 `This domain is not available for
   * registration` when a domain of any account is at, above or below it.
   */
  async create(db: Db, input: NewDomain): Promise<number> {
    if (this.names.registrable(input.name) !== input.name) throw errors.invalidDomainName()
    if ((await this.overlapping(input.name, db)).length > 0) throw errors.domainNotAvailable()
    const now = this.clock.now()
    const { id } = await repo.insertDomain(db, {
      account_id: input.accountId,
      name: input.name,
      status: STATUS.active.status,
      status_id: STATUS.active.id,
      renewal_date: input.renewalDate,
      tags: '[]',
      nameservers: JSON.stringify(input.nameservers),
      nameserver_profile: input.nameserverProfile,
      is_locked: 1,
      dnssec_enabled: 0,
      dnssec_keys: '[]',
      forwarder: null,
      forwarder_enabled: 0,
      managed_dns: this.managedBy(input.nameservers),
      contacts: JSON.stringify(input.contacts),
      cancel_at: null,
      zone_serial: nextSerial(0, now),
      created_at: iso(now),
      updated_at: iso(now),
    })
    return id
  }

  private managedBy(nameservers: Nameserver[]): number {
    return managedDns(nameservers, this.nameservers.builtin().nameservers)
  }

  /** Gives the zone a new serial; call in the transaction that changed it. */
  async bumpSerial(db: Db, d: Domain): Promise<void> {
    const now = this.clock.now()
    await repo.bumpSerial(db, d.account_id, d.id, nextSerial(0, now), iso(now))
  }
}

function flag(v: boolean | number | undefined): boolean {
  return v === true || v === 1
}

/** A zone key as a domain shows it. */
function dnssecKeyOf(key: { algorithm: number; flags: number; publicKey: string }): DnssecKey {
  return { alg: key.algorithm, flags: key.flags, pubKey: key.publicKey }
}

/** A domain's DNSSEC key as the registry publishes it: the DNSKEY and its SHA-256 DS. */
function registryKey(zone: string, key: DnssecKey): RegistryDnssecKey {
  const publicKey = Buffer.from(key.pubKey, 'base64')
  const ds = delegationKey(zone, { flags: key.flags, algorithm: key.alg, publicKey })
  return {
    flags: key.flags,
    protocol: DNSKEY_PROTOCOL,
    algorithm: key.alg,
    publicKey: key.pubKey,
    keyTag: ds.keyTag,
    digestType: DIGEST_SHA256,
    digest: ds.digest.toString('hex'),
  }
}

function forwarderOf(input: NonNullable<DomainUpdate['forwarder']>, current: { type: number; url: string } | null) {
  const enabled = input.enabled === undefined ? (current ? 1 : 0) : flag(input.enabled) ? 1 : 0
  const type = input.type ?? current?.type ?? 301
  const url = input.url ?? current?.url
  if (![301, 302, 303].includes(type)) throw errors.forwarderType()
  if (!url) {
    if (enabled) throw errors.forwarderUrlRequired()
    return { enabled, forwarder: null }
  }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw errors.forwarderUrl()
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw errors.forwarderUrl()
  return { enabled, forwarder: { type, url: parsed.toString() } }
}
