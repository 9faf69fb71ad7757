import { isIPv4 } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { Logger } from 'pino'
import { createPrivateKey } from 'node:crypto'
import type { DnsDriver, ServedZone, ZoneDrift, ZoneRecord, ZoneSigningKey, ZoneSource } from './dns.js'
import { servedNameservers } from './authority.js'
import { escapeQuoted, txtChunks } from '../../lib/dns/records.js'
import { apexNameservers, soaFor } from '../../lib/dns/zone-file.js'
import type { ZoneChange } from '../../lib/dns/zone-serial.js'
import { ALG_ECDSAP256SHA256, DNSKEY_PROTOCOL, iscPrivateKey, p256Point } from '../../lib/dns/dnssec.js'

/** Options of the PowerDNS driver. */
export interface PowerDnsOptions {
  /** The base URL of PowerDNS's HTTP API (webserver), e.g. `http://127.0.0.1:8081`; `/api/v1` is added. */
  url: string
  /** Sent as `X-API-Key`; never logged nor put in an error. */
  apiKey: string
  /** The PowerDNS server id in API paths. */
  serverId?: string
  /** How long one API request may take (ms). */
  timeoutMs?: number
  /** Where PowerDNS answers DNS queries, reported by `address()` once started (tests); null when not known. */
  dnsAddress?: { host: string; port: number } | null
}

/** A push to PowerDNS failed (unreachable, timed out or refused); the change can be pushed again later. */
export class DnsPushError extends Error {
  constructor(
    message: string,
    /** The HTTP status PowerDNS answered, or null when it did not answer. */
    readonly status: number | null = null,
  ) {
    super(message)
    this.name = 'DnsPushError'
  }
}

/** One RRset as PowerDNS's API reads and writes it. */
export interface PowerDnsRRset {
  /** Fully qualified, lower case, with the trailing dot. */
  name: string
  type: string
  ttl: number
  records: { content: string; disabled: boolean }[]
}

/** Marks the zones hostapi created in PowerDNS (its `account`): only those are deleted as extra by `resync()`. */
export const POWERDNS_ACCOUNT = 'hostapi'

const dot = (h: string) => (h.endsWith('.') ? h.toLowerCase() : `${h.toLowerCase()}.`)
const apexOf = (domain: string) => domain.trim().toLowerCase().replace(/\.$/, '')
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/
const HOSTNAME = /^(?=.{1,254}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)+$/
const isOwner = (name: string) =>
  name.length <= 253 && name.split('.').every((l, i) => LABEL.test(l) || (i === 0 && l === '*'))

/** A hostname in a value as PowerDNS wants it (FQDN with the trailing dot), or null when it is not one. */
function target(raw: string | undefined, allowRoot: boolean): string | null {
  if (raw === undefined) return null
  if (raw === '.') return allowRoot ? '.' : null
  const h = dot(raw)
  return HOSTNAME.test(h) ? h : null
}

const CAA = /^\d{1,3} [a-z0-9]{1,15} "(?:[^"\\\x00-\x1f\x7f]|\\.)*"$/s
const u16 = (s: string | undefined) => s !== undefined && /^\d{1,5}$/.test(s) && Number(s) <= 65535

/** TXT text as PowerDNS content: quoted strings of at most 255 bytes; `"`, `\` and control bytes escaped. */
function txtContent(text: string): string {
  return txtChunks(text)
    .map((b) => {
      const escaped = escapeQuoted(b.toString('utf8'))
      return `"${escaped.replace(/[\x00-\x1f\x7f]/g, (c) => `\\${String(c.charCodeAt(0)).padStart(3, '0')}`)}"`
    })
    .join(' ')
}

/** The PowerDNS content of one stored record value, or null when the value is not of its type's stored form. */
export function powerDnsContent(type: string, value: string): string | null {
  const f = value.split(' ')
  switch (type) {
    case 'A':
      return isIPv4(value) ? value : null
    case 'AAAA':
      return ipaddr.IPv6.isValid(value) && !value.includes('%') ? ipaddr.IPv6.parse(value).toRFC5952String() : null
    case 'CNAME':
    case 'NS':
      return f.length === 1 ? target(f[0], false) : null
    case 'MX': {
      const host = f.length === 2 && u16(f[0]) ? target(f[1], true) : null
      return host && `${Number(f[0])} ${host}`
    }
    case 'SRV': {
      const host = f.length === 4 && u16(f[0]) && u16(f[1]) && u16(f[2]) ? target(f[3], true) : null
      return host && `${Number(f[0])} ${Number(f[1])} ${Number(f[2])} ${host}`
    }
    case 'TXT':
      return value.length <= 65535 ? txtContent(value) : null
    case 'CAA':
      return CAA.test(value) && Number(f[0]) <= 255 ? value : null
    case 'TLSA':
    case 'DS':
      return /^\d{1,5} \d{1,3} \d{1,3} (?:[0-9a-f]{2})+$/i.test(value) ? value.toLowerCase() : null
    case 'SSHFP':
      return /^\d{1,3} \d{1,3} (?:[0-9a-f]{2})+$/i.test(value) ? value.toLowerCase() : null
    default:
      return null
  }
}

/**
 * The RRsets PowerDNS should hold for a served zone: the SOA (hostapi's serial) and apex NS from the zone, the
 * glue of in-zone nameservers (as the built-in server answers it), then the stored records grouped by name and
 * type, in first-seen order. Never throws: a record that cannot be pushed (outside the zone, the apex SOA/NS, a
 * value not in stored form, a second CNAME or a CNAME beside other data) is skipped and passed to `onSkipped`.
 * An RRset has one TTL: the lowest of its records'.
 */
export function toPowerDnsRRsets(
  zone: ServedZone,
  records: ZoneRecord[],
  onSkipped: (r: ZoneRecord, reason: string) => void = () => undefined,
): PowerDnsRRset[] {
  const apex = apexOf(zone.name)
  const nameservers = servedNameservers(zone)
  const meta = { serial: zone.serial, nameservers }
  const soa = soaFor(apex, meta)
  const sets = new Map<string, PowerDnsRRset>()
  const add = (name: string, type: string, ttl: number, content: string) => {
    const key = `${name} ${type}`
    const set = sets.get(key)
    if (!set) return void sets.set(key, { name, type, ttl, records: [{ content, disabled: false }] })
    set.ttl = Math.min(set.ttl, ttl)
    if (!set.records.some((r) => r.content === content)) set.records.push({ content, disabled: false })
  }
  const soaContent = [soa.mname, soa.rname, soa.serial >>> 0, soa.refresh, soa.retry, soa.expire, soa.minimum]
  add(`${apex}.`, 'SOA', soa.ttl, soaContent.join(' '))
  for (const ns of apexNameservers(meta)) if (target(ns, false)) add(`${apex}.`, 'NS', soa.ttl, ns)
  const typesAt = new Map<string, Set<string>>()
  const accepted: { r: ZoneRecord; name: string; content: string }[] = []
  for (const r of records) {
    const name = typeof r.name === 'string' ? r.name.toLowerCase().replace(/\.$/, '') : ''
    const skip = (reason: string) => onSkipped(r, reason)
    if (name !== apex && !name.endsWith(`.${apex}`)) skip('outside the zone')
    else if (!isOwner(name)) skip('not a valid owner name')
    else if (name === apex && (r.type === 'NS' || r.type === 'SOA')) skip('the apex SOA and NS come from the domain')
    else if (name === apex && (r.type === 'CNAME' || r.type === 'DS')) skip(`no ${r.type} at the zone apex`)
    else if (!Number.isInteger(r.ttl) || r.ttl < 0 || r.ttl > 2_147_483_647) skip('not a valid TTL')
    else {
      const content = typeof r.value === 'string' ? powerDnsContent(r.type, r.value) : null
      if (content === null) skip(`not a valid ${r.type} value`)
      else {
        accepted.push({ r, name, content })
        const types = typesAt.get(name) ?? new Set<string>()
        typesAt.set(name, types.add(r.type))
      }
    }
  }
  // A CNAME beside other data is refused by PowerDNS; the other data wins, as in the built-in server's answers.
  for (const { r, name, content } of accepted) {
    const fqdn = `${name}.`
    if (r.type === 'CNAME') {
      if (typesAt.get(name)!.size > 1) onSkipped(r, 'a CNAME beside other data at its name')
      else if (sets.has(`${fqdn} CNAME`) && sets.get(`${fqdn} CNAME`)!.records[0]!.content !== content) {
        onSkipped(r, 'a second CNAME at its name')
      } else add(fqdn, 'CNAME', r.ttl, content)
    } else add(fqdn, r.type, r.ttl, content)
  }
  for (const ns of nameservers) {
    const host = apexOf(ns.hostname)
    if ((host !== apex && !host.endsWith(`.${apex}`)) || !isOwner(host)) continue
    const types = typesAt.get(host)
    if (types?.has('CNAME')) continue
    if (typeof ns.ipv4 === 'string' && isIPv4(ns.ipv4) && !types?.has('A')) add(`${host}.`, 'A', soa.ttl, ns.ipv4)
    if (typeof ns.ipv6 === 'string' && ipaddr.IPv6.isValid(ns.ipv6) && !types?.has('AAAA')) {
      add(`${host}.`, 'AAAA', soa.ttl, ipaddr.IPv6.parse(ns.ipv6).toRFC5952String())
    }
  }
  return [...sets.values()]
}

const rrsetKey = (s: { name: string; type: string }) => `${s.name} ${s.type}`

/** True when PowerDNS's RRset holds what hostapi's does (same TTL and contents, in any order). */
function sameRRset(a: PowerDnsRRset, b: PowerDnsRRset): boolean {
  if (a.ttl !== b.ttl || a.records.length !== b.records.length) return false
  const contents = (s: PowerDnsRRset) => s.records.map((r) => `${r.disabled ? '!' : ''}${r.content}`).sort()
  const x = contents(a)
  const y = contents(b)
  return x.every((c, i) => c === y[i])
}

interface PdnsZone {
  name: string
  account?: string
  soa_edit_api?: string
  /** True when PowerDNS holds keys for the zone (it signs it). */
  dnssec?: boolean
  rrsets?: PowerDnsRRset[]
}

/** One of a zone's keys as PowerDNS's API lists it. */
interface PdnsCryptokey {
  id: number
  active: boolean
  /** `flags protocol algorithm base64`. */
  dnskey: string
}

/** A zone key's DNSKEY as PowerDNS writes it. */
function dnskeyContent(key: ZoneSigningKey): string {
  const point = p256Point(createPrivateKey(key.privateKeyPem))
  return `${key.flags} ${DNSKEY_PROTOCOL} ${key.algorithm} ${point.toString('base64')}`
}

type RRsetChange = (PowerDnsRRset & { changetype: 'REPLACE' }) | { name: string; type: string; changetype: 'DELETE' }

/**
 * Pushes hostapi's zones to a PowerDNS Authoritative server through its HTTP API, which then answers for them.
 * Zones it creates are `Native` (PowerDNS replication, if any, is the operator's), carry `account: hostapi`, and
 * keep hostapi's SOA serial (`soa_edit_api` off). Every push reads the zone from the `ZoneSource` and PowerDNS's
 * copy, and changes only the RRsets that differ. Failures throw `DnsPushError`; nothing is retried here.
 * A zone with DNSSEC on is signed by PowerDNS with hostapi's key, imported as its one active combined signing key
 * (so the DS at the parent holds whatever happens to PowerDNS's database); with DNSSEC off it has no keys.
 */
export class PowerDnsDriver implements DnsDriver {
  readonly pushes = true
  private readonly base: string
  private readonly timeoutMs: number
  private started = false
  /** The last push queued per zone: pushes of one zone run one after the other. */
  private readonly queues = new Map<string, Promise<unknown>>()

  constructor(
    private readonly opts: PowerDnsOptions,
    private readonly source: ZoneSource,
    private readonly log: Logger,
  ) {
    this.base = `${opts.url.replace(/\/+$/, '')}/api/v1/servers/${encodeURIComponent(opts.serverId ?? 'localhost')}`
    this.timeoutMs = opts.timeoutMs ?? 5000
  }

  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    // PowerDNS being down must not keep hostapi from starting: pushes fail (and are retried) until it is back.
    try {
      await this.request('GET', '')
      this.log.info({ url: this.opts.url }, 'PowerDNS API answers')
    } catch (err) {
      this.log.warn({ err: String(err) }, 'PowerDNS API does not answer; zone pushes fail until it does')
    }
  }

  async stop(): Promise<void> {
    this.started = false
  }

  address() {
    return this.started ? (this.opts.dnsAddress ?? null) : null
  }

  async publish(change: ZoneChange): Promise<void> {
    const apex = apexOf(change.domain)
    if (apex === '') return
    const names = change.kind === 'records' && change.names ? new Set(change.names.map((n) => `${apexOf(n)}.`)) : null
    // Every kind ends in PowerDNS matching the zone source, so a removal followed by a new domain of the same name
    // leaves the new zone served even if the two pushes cross.
    await this.inTurn(apex, async () => {
      const [served] = await this.source.servedZones([apex])
      if (!served) await this.deleteZone(apex)
      else await this.sync(served, names)
    })
  }

  /**
   * Runs `fn` after the pushes of the zone queued before it, so an older read of the zone source is never written
   * over a newer one by this instance.
   */
  private inTurn<T>(apex: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(apex) ?? Promise.resolve()).then(fn, fn)
    const tail = run.catch(() => undefined)
    this.queues.set(apex, tail)
    void tail.then(() => {
      if (this.queues.get(apex) === tail) this.queues.delete(apex)
    })
    return run
  }

  /**
   * Compares PowerDNS's zones (every one, or those named) with what hostapi serves, fixes the drift and returns
   * it, one entry per zone that drifted: missing zones are created, RRsets that differ replaced, and zones hostapi
   * no longer serves deleted when hostapi created them (others are only reported).
   */
  async resync(names?: string[]): Promise<ZoneDrift[]> {
    // Without names: every zone PowerDNS holds (extra ones are found) and every zone hostapi serves (missing ones).
    const apexes = names
      ? [...new Set(names.map(apexOf).filter(Boolean))]
      : [
          ...new Set([
            ...((await this.request('GET', '/zones')) as PdnsZone[]).map((z) => apexOf(z.name)),
            ...(await this.source.servedZoneNames()),
          ]),
        ]
    const drift: ZoneDrift[] = []
    for (const apex of apexes) {
      // One zone PowerDNS refuses must not keep the others from being fixed: it is reported with its error.
      try {
        const found = await this.inTurn(apex, () => this.resyncZone(apex))
        if (found) drift.push(found)
      } catch (err) {
        if (!(err instanceof DnsPushError)) throw err
        drift.push({ zone: apex, missing: false, extra: false, differing: [], error: err.message })
      }
    }
    return drift
  }

  private async resyncZone(apex: string): Promise<ZoneDrift | null> {
    const [served] = await this.source.servedZones([apex])
    const current = await this.getZone(apex)
    if (!served) {
      if (!current) return null
      if (current.account === POWERDNS_ACCOUNT) await this.deleteZone(apex)
      else this.log.warn({ zone: apex }, 'PowerDNS zone not served by hostapi (not created by hostapi: kept)')
      return { zone: apex, missing: false, extra: true, differing: [] }
    }
    const differing = await this.sync(served, null, current)
    return !current || differing.length ? { zone: apex, missing: !current, extra: false, differing } : null
  }

  /**
   * Makes PowerDNS's copy of `zone` (only the RRsets at `names`, and the SOA, when given) match hostapi's, creating
   * the zone when PowerDNS has none (`known`: its copy when already read). Returns the RRsets that differed in an
   * existing zone.
   */
  private async sync(zone: ServedZone, names: Set<string> | null, known?: PdnsZone | null): Promise<string[]> {
    const apex = apexOf(zone.name)
    const records = await this.source.zoneRecords(zone.id)
    const wanted = toPowerDnsRRsets(zone, records, (r, reason) => {
      const record = { type: r.type, name: r.name, value: r.value }
      this.log.warn({ zone: apex, record, reason }, 'DNS record not pushed')
    })
    let current = known === undefined ? await this.getZone(apex) : known
    let created = false
    if (!current) {
      // Created with its SOA and NS only; the rest goes in a PATCH, which (unlike creating a zone) also drops what
      // PowerDNS's packet cache still holds for names of the zone, such as the REFUSED answered before it existed.
      const initial = wanted.filter((s) => s.name === `${apex}.` && (s.type === 'SOA' || s.type === 'NS'))
      current = (await this.request('POST', '/zones', {
        name: `${apex}.`,
        kind: 'Native',
        account: POWERDNS_ACCOUNT,
        soa_edit_api: '',
        nameservers: [],
        rrsets: initial.map((s) => ({ ...s, changetype: 'REPLACE' })),
      })) as PdnsZone
      created = true
      this.log.info({ zone: apex }, 'PowerDNS zone created')
    } else if (current.soa_edit_api) {
      // PowerDNS would otherwise raise the serial on every API change, and it would drift from hostapi's.
      await this.request('PUT', this.zonePath(apex), { soa_edit_api: '' })
    }
    // A zone just created gets everything, whatever names the change named.
    const inScope = (s: { name: string; type: string }) => created || !names || s.type === 'SOA' || names.has(s.name)
    const have = new Map((current.rrsets ?? []).map((s) => [rrsetKey(s), s]))
    const wantedKeys = new Set(wanted.map(rrsetKey))
    const changes: RRsetChange[] = []
    for (const s of wanted) {
      const old = have.get(rrsetKey(s))
      const forced = created && s.type === 'SOA'
      if (forced || (inScope(s) && (!old || !sameRRset(old, s)))) changes.push({ ...s, changetype: 'REPLACE' })
    }
    for (const s of current.rrsets ?? []) {
      if (inScope(s) && !wantedKeys.has(rrsetKey(s))) changes.push({ name: s.name, type: s.type, changetype: 'DELETE' })
    }
    if (changes.length) await this.request('PATCH', this.zonePath(apex), { rrsets: changes })
    const keysChanged = await this.syncKeys(apex, zone.dnssec ?? null, current.dnssec === true)
    if (created) return []
    return [...changes.map(rrsetKey), ...(keysChanged ? [`${apex}. DNSKEY`] : [])]
  }

  /**
   * Makes the zone's keys in PowerDNS hostapi's key alone (imported, active), or none when `key` is null; `hasKeys`
   * (PowerDNS's `dnssec` flag of the zone) spares the look-up for an unsigned zone. Returns whether anything changed.
   */
  private async syncKeys(apex: string, key: ZoneSigningKey | null, hasKeys: boolean): Promise<boolean> {
    if (!key && !hasKeys) return false
    if (key && key.algorithm !== ALG_ECDSAP256SHA256) throw new Error(`DNSSEC algorithm ${key.algorithm} not supported`)
    const path = `${this.zonePath(apex)}/cryptokeys`
    const keys = (await this.request('GET', path)) as PdnsCryptokey[]
    const wanted = key ? dnskeyContent(key) : null
    const same = (k: PdnsCryptokey) => k.active && k.dnskey.replace(/\s+/g, ' ').trim() === wanted
    let changed = false
    if (key && !keys.some(same)) {
      const privatekey = iscPrivateKey(createPrivateKey(key.privateKeyPem))
      // The algorithm (ECDSAP256SHA256) is read from the private key: PowerDNS refuses it given beside one.
      const body = { keytype: 'csk', active: true, published: true, privatekey }
      await this.request('POST', path, body)
      changed = true
    }
    // Keys PowerDNS made or kept that are not hostapi's would sign with a key the parent's DS does not name.
    for (const k of keys) {
      if (same(k)) continue
      await this.request('DELETE', `${path}/${k.id}`)
      changed = true
    }
    if (changed && key) await this.request('PUT', `${this.zonePath(apex)}/rectify`)
    if (changed) this.log.info({ zone: apex, dnssec: key !== null }, 'PowerDNS zone keys updated')
    return changed
  }

  private zonePath(apex: string): string {
    // PowerDNS's zone id: the name with the dot, any byte but letters, digits, `.` and `-` written `=XX`.
    const id = [...Buffer.from(`${apex}.`, 'utf8')]
      .map((b) => String.fromCharCode(b))
      .map((c) => (/[A-Za-z0-9.-]/.test(c) ? c : `=${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`))
      .join('')
    return `/zones/${encodeURIComponent(id)}`
  }

  /** PowerDNS's copy of a zone with its RRsets, or null when it has none. */
  private async getZone(apex: string): Promise<PdnsZone | null> {
    return (await this.request('GET', this.zonePath(apex), undefined, true)) as PdnsZone | null
  }

  private async deleteZone(apex: string): Promise<void> {
    if ((await this.request('DELETE', this.zonePath(apex), undefined, true)) !== null) {
      this.log.info({ zone: apex }, 'PowerDNS zone deleted')
    }
  }

  /** One API call; the parsed JSON answer (true for an empty one), or null for a 404 when `missingOk`. */
  private async request(method: string, path: string, body?: unknown, missingOk = false): Promise<unknown> {
    const what = `PowerDNS ${method} ${path || '/'}`
    let res: Response
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          'X-API-Key': this.opts.apiKey,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      })
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err))
      const code = (e.cause as { code?: string } | undefined)?.code
      const reason = e.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (code ?? e.message)
      throw new DnsPushError(`${what}: PowerDNS at ${this.opts.url} cannot be reached (${reason})`)
    }
    const text = await res.text().catch(() => '')
    if (res.status === 404 && missingOk) return null
    if (!res.ok) {
      let detail = text.slice(0, 300)
      try {
        detail = String((JSON.parse(text) as { error?: unknown }).error ?? detail)
      } catch {
        // Not JSON (PowerDNS answers some errors in plain text): the text itself is the detail.
      }
      if (this.opts.apiKey) detail = detail.replaceAll(this.opts.apiKey, '***')
      throw new DnsPushError(`${what}: ${res.status} ${detail}`.trim(), res.status)
    }
    if (text === '') return true
    try {
      return JSON.parse(text) as unknown
    } catch {
      throw new DnsPushError(`${what}: the answer is not JSON`, res.status)
    }
  }
}
