import type { Logger } from 'pino'
import { createPrivateKey } from 'node:crypto'
import pLimit, { type LimitFunction } from 'p-limit'
import type { DnsDriver, ResyncProgress, ServedZone, ZoneDrift, ZoneSigningKey, ZoneSource } from './dns.js'
import { apexOf, rrsetKey, sameRRset, toPowerDnsRRsets, type PowerDnsRRset } from './powerdns-rrsets.js'
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
  /**
   * The largest request body PowerDNS takes (its `webserver-max-bodysize`, 2 MiB by default): a zone's changes are
   * sent in as many PATCH requests as keep each under it.
   */
  maxBodyBytes?: number
  /** How many zones are pushed at once (PowerDNS's SQLite backend takes one writer: more only wait on its lock). */
  concurrency?: number
}

/** PowerDNS's own default `webserver-max-bodysize` (2 MB, in MiB). */
export const POWERDNS_MAX_BODY_BYTES = 2 * 1024 * 1024

// What a PATCH body holds besides its RRsets (`{"rrsets":[…]}`), with room to spare.
const BODY_OVERHEAD = 1024
// A request PowerDNS fails with a server error (its gsqlite3 backend answers 500 to a second writer while the first
// holds the database lock) is sent again this often, soon, before the push fails and waits for the job's backoff.
const BUSY_RETRIES = 6
/** How many pushes of a zone in a row may find it changed afterwards before the push fails (and is retried). */
const SETTLE_ROUNDS = 5

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

/** Marks the zones hostapi created in PowerDNS (its `account`): only those are deleted as extra by `resync()`. */
export const POWERDNS_ACCOUNT = 'hostapi'

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
  /** At most `concurrency` zone pushes at once; the others wait their turn, first come first served. */
  private readonly slots: LimitFunction
  /** The largest body one request may have, and the largest one RRset change may take in it. */
  readonly maxBodyBytes: number

  constructor(
    private readonly opts: PowerDnsOptions,
    private readonly source: ZoneSource,
    private readonly log: Logger,
  ) {
    this.base = `${opts.url.replace(/\/+$/, '')}/api/v1/servers/${encodeURIComponent(opts.serverId ?? 'localhost')}`
    this.timeoutMs = opts.timeoutMs ?? 5000
    this.maxBodyBytes = opts.maxBodyBytes ?? POWERDNS_MAX_BODY_BYTES
    this.slots = pLimit(opts.concurrency ?? 4)
  }

  /** The most bytes one record set may take as a change (the body limit less a PATCH's own): larger ones never fit. */
  get maxRecordSetBytes(): number {
    return this.maxBodyBytes - BODY_OVERHEAD
  }

  /** Throws DnsPushError unless PowerDNS's API answers (used to notice that it is back after an outage). */
  async ping(): Promise<void> {
    await this.request('GET', '')
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
    await this.inTurn(apex, () =>
      this.untilSettled(apex, async (served) => {
        if (!served) await this.deleteZone(apex)
        else await this.sync(served, names)
      }),
    )
  }

  /**
   * Runs `push` with the zone as served now, then reads the zone's serial again: when it changed (a change committed
   * while the push ran), the push wrote what may already be older than what another instance pushed after it, so it
   * runs again. Every push thus ends having written a zone that was current after its last write, and whichever
   * instance writes last, PowerDNS ends with the newest zone. A zone that keeps changing throws after a few rounds
   * (the job is retried).
   */
  private async untilSettled<T>(apex: string, push: (served: ServedZone | null) => Promise<T>): Promise<T> {
    const versionOf = (z: ServedZone | undefined) => (z ? `${z.id}:${z.serial}` : 'none')
    for (let round = 1; ; round++) {
      const [served] = await this.source.servedZones([apex])
      const result = await push(served ?? null)
      const [now] = await this.source.servedZones([apex])
      if (versionOf(now) === versionOf(served)) return result
      if (round >= SETTLE_ROUNDS)
        throw new DnsPushError(`PowerDNS ${apex}: the zone changed during each of ${round} pushes in a row`)
    }
  }

  /**
   * Runs `fn` after the pushes of the zone queued before it, so an older read of the zone source is never written
   * over a newer one by this instance.
   */
  private inTurn<T>(apex: string, fn: () => Promise<T>): Promise<T> {
    // The slot is taken once the zone's earlier pushes are done: a zone waiting for its turn holds none.
    const slotted = () => this.slots(fn)
    const run = (this.queues.get(apex) ?? Promise.resolve()).then(slotted, slotted)
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
  async resync(names?: string[], progress?: ResyncProgress): Promise<ZoneDrift[]> {
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
    let done = 0
    for (const apex of apexes) {
      // One zone PowerDNS refuses must not keep the others from being fixed: it is reported with its error.
      try {
        const found = await this.inTurn(apex, () => this.resyncZone(apex))
        if (found) drift.push(found)
      } catch (err) {
        if (!(err instanceof DnsPushError)) throw err
        drift.push({ zone: apex, missing: false, extra: false, differing: [], error: err.message })
      }
      progress?.(++done, apexes.length)
    }
    return drift
  }

  /** The zone's drift (found in the first round that found any, when the zone changed meanwhile and it ran again). */
  private async resyncZone(apex: string): Promise<ZoneDrift | null> {
    let found: ZoneDrift | null = null
    await this.untilSettled(apex, async (served) => {
      const drift = await this.resyncServed(apex, served)
      found ??= drift
    })
    return found
  }

  private async resyncServed(apex: string, served: ServedZone | null): Promise<ZoneDrift | null> {
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
    for (const part of this.inParts(apex, changes)) await this.request('PATCH', this.zonePath(apex), { rrsets: part })
    const keysChanged = await this.syncKeys(apex, zone.dnssec ?? null, current.dnssec === true)
    if (created) return []
    return [...changes.map(rrsetKey), ...(keysChanged ? [`${apex}. DNSKEY`] : [])]
  }

  /**
   * The changes in groups whose PATCH bodies stay under `maxBodyBytes`, the SOA in the last one, so that the serial
   * rises only once everything else is in. A single change that cannot fit is refused (the API refuses such a
   * record set first, see `maxRecordSetBytes`).
   */
  private inParts(apex: string, changes: RRsetChange[]): RRsetChange[][] {
    const ordered = [...changes.filter((c) => c.type !== 'SOA'), ...changes.filter((c) => c.type === 'SOA')]
    const parts: RRsetChange[][] = []
    let part: RRsetChange[] = []
    let size = 0
    for (const c of ordered) {
      const bytes = Buffer.byteLength(JSON.stringify(c)) + 1
      if (bytes > this.maxRecordSetBytes)
        throw new DnsPushError(
          `PowerDNS PATCH ${apex}: the record set ${c.name} ${c.type} is ${bytes} bytes, more than one request to PowerDNS may carry (${this.maxBodyBytes} bytes)`,
        )
      if (part.length && size + bytes > this.maxRecordSetBytes) {
        parts.push(part)
        part = []
        size = 0
      }
      part.push(c)
      size += bytes
    }
    if (part.length) parts.push(part)
    return parts
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

  /**
   * One API call (sent again, soon, while PowerDNS answers a server error, as its SQLite backend does to parallel
   * writers); the parsed JSON answer (true for an empty one), or null for a 404 when `missingOk`.
   */
  private async request(method: string, path: string, body?: unknown, missingOk = false): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.requestOnce(method, path, body, missingOk)
      } catch (err) {
        const busy = err instanceof DnsPushError && err.status !== null && err.status >= 500
        if (!busy || attempt >= BUSY_RETRIES) throw err
        await new Promise((r) => setTimeout(r, 50 * 2 ** attempt))
      }
    }
  }

  private async requestOnce(method: string, path: string, body: unknown, missingOk: boolean): Promise<unknown> {
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
