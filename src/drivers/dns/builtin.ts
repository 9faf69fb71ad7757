import dgram from 'node:dgram'
import net from 'node:net'
import { performance } from 'node:perf_hooks'
import dnsPacket, { type Packet } from 'dns-packet'
import type { Logger } from 'pino'
import type { DnsDriver, ServedZone, ZoneSource } from './dns.js'
import { buildSnapshot, soaRecord, transferRecords, type ZoneSnapshot } from './authority.js'
import { catalogSnapshot } from './catalog.js'
import { ZoneNotifier } from './notify.js'
import { answerQuery, errorReply, type Rcode } from './query.js'
import {
  QTYPE_AXFR,
  QTYPE_IXFR,
  TCP_MESSAGE_MAX,
  TransferAcl,
  ixfrClientSerial,
  questionType,
  serialNewer,
  transferMessages,
} from './transfer.js'
import { StartError } from '../../config/config.js'
import type { DnsRrlConfig, DnsTransferConfig } from '../../config/dns.js'
import { ResponseRateLimiter } from './rate-limit.js'
import { DomainNames } from '../../lib/domain-name.js'
import type { ZoneChange } from '../../lib/dns/zone-serial.js'
import {
  TSIG_ERROR,
  badTimeOtherData,
  signTsig,
  tsigLength,
  verifyTsig,
  type TsigCheck,
  type TsigKey,
} from '../../lib/dns/tsig.js'

/** Options of the built-in DNS server. */
export interface BuiltinDnsOptions {
  /** The address to listen on (UDP and TCP). */
  host: string
  /** The port; null switches the server off; 0 picks a free port (tests, benchmarks). */
  port: number | null
  /** How long a zone read from the zone source is answered without checking its serial again (ms). */
  staleMs?: number
  /** The operator's private suffixes (HOSTAPI_PRIVATE_SUFFIXES): names one label below them are zones too. */
  privateSuffixes?: readonly string[]
  /** Zone transfers to and NOTIFY of secondaries (HOSTAPI_DNS_SECONDARIES, HOSTAPI_DNS_TSIG_KEY); none by default. */
  transfer?: DnsTransferConfig
  /** How long each NOTIFY attempt waits for an answer (ms); one entry per attempt. */
  notifyTimeoutsMs?: number[]
  /** Response-rate limiting of UDP answers (HOSTAPI_DNS_RRL_*); none when absent. */
  rrl?: DnsRrlConfig
}

const TCP_IDLE_MS = 10_000
/** Bounds the per-name cache, which random query names would otherwise grow without limit. */
const MAX_CACHED_NAMES = 10_000

interface NameEntry {
  zoneId: number | null
  checkedAt: number
}

/**
 * An authoritative DNS server over UDP and TCP answering from the zones its `ZoneSource` gives (the DNS module's,
 * over the database).
 * A name is answered only from the zone of its registrable domain (one label below its public suffix:
 * `mail.demo-shop.nl` from `demo-shop.nl`), so a zone for a name above or below a registrable domain — which
 * the API never creates, but bad data might hold — is never served and cannot take over another account's names.
 * Zones are cached and re-validated by their serial at most `staleMs` after they were read, so a change made
 * through another instance on the same database is answered within that time; `publish` drops a zone at once,
 * whatever kind of change it names.
 *
 * As a hidden primary it answers AXFR, and IXFR with the whole zone (RFC 1995 §4), over TCP to the secondaries'
 * addresses, and sends them NOTIFY after each published change. With a TSIG key a transfer must be signed with it:
 * unsigned ones are REFUSED, badly signed ones NOTAUTH with the TSIG error (BADKEY, BADSIG, BADTIME; RFC 8945 §5.2),
 * and every message of the transfer is signed. A query signed with the key is answered signed.
 */
export class BuiltinDnsServer implements DnsDriver {
  readonly pushes = false
  private udp: dgram.Socket | null = null
  private tcp: net.Server | null = null
  private readonly sockets = new Set<net.Socket>()
  private bound: { host: string; port: number } | null = null
  private readonly staleMs: number
  private readonly domainNames: DomainNames
  private readonly names = new Map<string, NameEntry>()
  private readonly zones = new Map<number, ZoneSnapshot>()
  private readonly loading = new Map<string, Promise<ZoneSnapshot | null>>()
  /** Raised by every publish(): a read that began before it must not fill the cache with what it saw. */
  private generation = 0
  private readonly acl: TransferAcl
  private readonly transfersOn: boolean
  private readonly tsigKey: TsigKey | null
  private readonly notifier: ZoneNotifier | null
  private readonly rrl: ResponseRateLimiter | null
  /** The catalog zone's name, when it is served (to the secondaries only); null when off. */
  private readonly catalogName: string | null
  private catalog: { snapshot: ZoneSnapshot; checkedAt: number } | null = null
  private catalogNotified: number | null = null

  constructor(
    private readonly source: ZoneSource,
    private readonly opts: BuiltinDnsOptions,
    private readonly log: Logger,
  ) {
    this.staleMs = opts.staleMs ?? 500
    this.domainNames = new DomainNames(opts.privateSuffixes ?? [])
    const transfer = opts.transfer ?? { secondaries: [], tsigKey: null, catalogZone: null }
    this.acl = new TransferAcl(transfer.secondaries)
    this.transfersOn = transfer.secondaries.length > 0
    this.catalogName = this.transfersOn ? (transfer.catalogZone ?? null) : null
    const key = transfer.tsigKey
    this.tsigKey = key ? { name: key.name, secret: Buffer.from(key.secret, 'base64') } : null
    const targets = transfer.secondaries.flatMap((s) =>
      s.notifyPort === null ? [] : [{ host: s.address, port: s.notifyPort }],
    )
    this.notifier = targets.length ? new ZoneNotifier(targets, this.tsigKey, log, opts.notifyTimeoutsMs) : null
    const rrl = opts.rrl
    this.rrl = rrl?.responsesPerSecond
      ? new ResponseRateLimiter(rrl, (qname) => this.domainNames.registrableDomainOf(qname))
      : null
  }

  address() {
    return this.bound
  }

  async start(): Promise<void> {
    if (this.opts.port === null || this.bound) return
    const attempts = this.opts.port === 0 ? 10 : 1
    let lastError: unknown
    for (let i = 0; i < attempts; i++) {
      try {
        await this.bind(this.opts.port)
        this.log.info({ dns: this.bound }, 'DNS server listening (UDP and TCP)')
        return
      } catch (err) {
        lastError = err
        await this.stop()
      }
    }
    const reason = lastError instanceof Error ? lastError.message : String(lastError)
    throw new StartError(
      `The DNS server cannot listen on ${this.opts.host}:${this.opts.port} (HOSTAPI_DNS_HOST/HOSTAPI_DNS_PORT; port 0 switches it off): ${reason}`,
    )
  }

  private async bind(port: number): Promise<void> {
    const host = this.opts.host
    const udp = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' })
    this.udp = udp
    await new Promise<void>((resolveBind, reject) => {
      udp.once('error', reject)
      udp.bind(port, host, () => {
        udp.off('error', reject)
        resolveBind()
      })
    })
    udp.on('error', (err) => this.log.warn({ err: err.message }, 'DNS UDP socket error'))
    udp.on('message', (msg, rinfo) => {
      void this.respond(msg, 'udp', rinfo.address).then((replies) => {
        for (const reply of replies) {
          const out = this.rrl ? this.rrl.filter(reply, rinfo.address) : reply
          if (out && this.udp === udp) udp.send(out, rinfo.port, rinfo.address)
        }
      })
    })
    const actualPort = udp.address().port
    const tcp = net.createServer((socket) => this.serveTcp(socket))
    this.tcp = tcp
    await new Promise<void>((resolveListen, reject) => {
      tcp.once('error', reject)
      tcp.listen(actualPort, host, () => {
        tcp.off('error', reject)
        resolveListen()
      })
    })
    tcp.on('error', (err) => this.log.warn({ err: err.message }, 'DNS TCP server error'))
    this.bound = { host, port: actualPort }
  }

  async stop(): Promise<void> {
    const udp = this.udp
    const tcp = this.tcp
    this.udp = null
    this.tcp = null
    this.bound = null
    this.notifier?.stop()
    if (udp) await new Promise<void>((r) => udp.close(() => r())).catch(() => undefined)
    for (const s of this.sockets) s.destroy()
    this.sockets.clear()
    if (tcp) await new Promise<void>((r) => tcp.close(() => r()))
  }

  async publish(change: ZoneChange): Promise<void> {
    // Every kind is handled alike: the zone is read afresh on the next query (or found gone).
    const name = change.domain.trim().toLowerCase().replace(/\.$/, '')
    this.generation++
    for (const [id, z] of this.zones) if (z.name === name) this.zones.delete(id)
    // Names below the domain may have been resolved to another zone or to none; forget them all.
    this.names.clear()
    if (this.notifier && this.bound && change.kind !== 'removed') void this.notifyChange(name)
    // A zone that starts or stops being served changes the catalog: the secondaries learn it at once.
    if (this.notifier && this.bound && this.catalogName && change.kind !== 'records') void this.notifyCatalog()
  }

  /** Reads the catalog at the committed state and notifies the secondaries when its serial moved; never throws. */
  private async notifyCatalog(): Promise<void> {
    try {
      const zone = await this.catalogZone(true)
      if (!this.bound || zone.serial === this.catalogNotified) return
      this.catalogNotified = zone.serial
      this.notifier?.notify(zone.name, soaRecord(zone))
    } catch (err) {
      this.log.warn({ zone: this.catalogName, err: String(err) }, 'DNS NOTIFY skipped: the catalog cannot be read')
    }
  }

  /** The catalog zone, read again when `committed` or older than `staleMs`. */
  private async catalogZone(committed: boolean): Promise<ZoneSnapshot> {
    const cached = this.catalog
    if (!committed && cached && performance.now() - cached.checkedAt <= this.staleMs) return cached.snapshot
    const name = this.catalogName
    if (name === null) throw new Error('the catalog zone is read while it is not served')
    const checkedAt = performance.now()
    const catalog = await this.source.catalog()
    const snapshot = cached?.snapshot.serial === catalog.serial ? cached.snapshot : catalogSnapshot(name, catalog)
    if (!this.catalog || this.catalog.checkedAt <= checkedAt) this.catalog = { snapshot, checkedAt }
    return snapshot
  }

  /** Reads the changed zone afresh and notifies the secondaries of its serial; never throws (logged). */
  private async notifyChange(name: string): Promise<void> {
    try {
      const zone = await this.zoneFor(name)
      if (!zone || zone.name !== name || !this.bound) return
      this.notifier?.notify(zone.name, soaRecord(zone))
    } catch (err) {
      this.log.warn({ zone: name, err: String(err) }, 'DNS NOTIFY skipped: the zone cannot be read')
    }
  }

  /**
   * Reads the zone for `qname` (the served domain that is its registrable domain), from the cache when fresh enough.
   * `committed` (SOA queries and transfers, what secondaries decide by): the zone's serial is read from the zone
   * source first (one indexed read, not shared with reads that may have begun before the request), so the answer
   * shows every change committed before the request, whichever instance made it. `secondary`: the client may
   * transfer zones, and so is answered the catalog zone.
   */
  async zoneFor(qname: string, committed = false, secondary = false): Promise<ZoneSnapshot | null> {
    const cat = this.catalogName
    // The catalog lists every zone: it is answered to the secondaries only.
    if (cat && (qname === cat || qname.endsWith(`.${cat}`))) return secondary ? this.catalogZone(committed) : null
    const apex = this.domainNames.registrableDomainOf(qname)
    if (!apex) return null
    if (committed) return this.lookup(apex)
    const e = this.names.get(apex)
    if (e && performance.now() - e.checkedAt <= this.staleMs) {
      if (e.zoneId === null) return null
      const id = e.zoneId
      const z = this.zones.get(id)
      if (z) return z
      return this.coalesce(`${this.generation}:id:${id}`, () => this.reloadById(id))
    }
    return this.coalesce(`${this.generation}:q:${apex}`, () => this.lookup(apex))
  }

  private coalesce(key: string, fn: () => Promise<ZoneSnapshot | null>): Promise<ZoneSnapshot | null> {
    const pending = this.loading.get(key)
    if (pending) return pending
    const p = fn().finally(() => this.loading.delete(key))
    this.loading.set(key, p)
    return p
  }

  private async lookup(apex: string): Promise<ZoneSnapshot | null> {
    const generation = this.generation
    // A zone's name is unique; should two zones ever carry it, the oldest one answers.
    const [best] = await this.source.servedZones([apex])
    const checkedAt = performance.now()
    if (generation === this.generation) {
      if (this.names.size >= MAX_CACHED_NAMES) this.names.clear()
      this.names.set(apex, { zoneId: best?.id ?? null, checkedAt })
    }
    return best ? this.snapshotFor(best, generation) : null
  }

  private async reloadById(id: number): Promise<ZoneSnapshot | null> {
    const generation = this.generation
    const zone = await this.source.servedZone(id)
    if (!zone) {
      this.names.clear()
      return null
    }
    return this.snapshotFor(zone, generation)
  }

  private async snapshotFor(zone: ServedZone, generation: number): Promise<ZoneSnapshot> {
    const cached = this.zones.get(zone.id)
    const fresh = cached && cached.serial === zone.serial && cached.nameserversJson === zone.nameserversJson
    if (fresh && cached.name === zone.name) return cached
    const records = await this.source.zoneRecords(zone.id)
    const snapshot = await buildSnapshot(zone, records, (r, err) =>
      this.log.warn({ zone: zone.name, record: r, err: String(err) }, 'DNS record skipped: cannot be encoded'),
    )
    if (generation === this.generation) this.zones.set(zone.id, snapshot)
    return snapshot
  }

  private serveTcp(socket: net.Socket): void {
    this.sockets.add(socket)
    socket.setNoDelay(true)
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy())
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    let buffered: Buffer = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk
      while (buffered.length >= 2) {
        const len = buffered.readUInt16BE(0)
        if (buffered.length < 2 + len) break
        const msg = buffered.subarray(2, 2 + len)
        buffered = buffered.subarray(2 + len)
        void this.respond(msg, 'tcp', socket.remoteAddress).then((replies) => {
          for (const reply of replies) {
            if (socket.destroyed) return
            const prefix = Buffer.alloc(2)
            prefix.writeUInt16BE(reply.length)
            socket.write(Buffer.concat([prefix, reply]))
          }
        })
      }
    })
  }

  /**
   * Answers one DNS message from `from`: a zone transfer with its messages, a signed query signed, any other as
   * `handle` does; none when it must be dropped.
   */
  async respond(msg: Buffer, transport: 'udp' | 'tcp', from: string | undefined): Promise<Buffer[]> {
    if (msg.length < 12 || msg.readUInt16BE(2) & 0x8000) return []
    // Without secondaries every message is answered as it always was (transfers REFUSED, TSIG ignored).
    if (!this.transfersOn) return asList(await this.handle(msg, transport))
    const secondary = this.acl.allows(from)
    const qtype = questionType(msg)
    const isTransfer = qtype === QTYPE_AXFR || qtype === QTYPE_IXFR
    // Without a key, TSIG on a query is ignored as it always was; a transfer is checked either way.
    if (!isTransfer && !this.tsigKey) return asList(await this.handle(msg, transport, 0, secondary))
    const now = Math.floor(Date.now() / 1000)
    const check = verifyTsig(msg, this.tsigKey, { now })
    if (check.status === 'malformed') return [errorReply(msg, 'FORMERR')]
    if (check.status === 'error') {
      const fields = { client: from, tsig: check.error, key: check.record.keyName }
      this.log.warn(fields, 'DNS request with a bad TSIG refused')
      return asList(this.tsigError(msg, check, now))
    }
    const requestMac = check.status === 'ok' ? check.mac : null
    if (isTransfer) return this.transfer(msg, transport, from, requestMac, now)
    // A request's MAC checked out, so it was signed with our key: the reply is signed with it.
    const key = requestMac ? this.tsigKey : null
    const reply = await this.handle(msg, transport, key ? tsigLength(key) : 0, secondary)
    if (!reply || !requestMac || !key) return asList(reply)
    return [signTsig(reply, key, { now, requestMac }).message]
  }

  /** NOTAUTH with the TSIG error: unsigned for BADKEY and BADSIG, signed for BADTIME (RFC 8945 §5.3.2). */
  private tsigError(msg: Buffer, check: Extract<TsigCheck, { status: 'error' }>, now: number): Buffer | null {
    const reply = errorReply(msg, 'NOTAUTH')
    const error = TSIG_ERROR[check.error]
    const key = this.tsigKey ?? { name: check.record.keyName, secret: Buffer.alloc(0) }
    if (check.error !== 'BADTIME') return signTsig(reply, key, { now, error, unsigned: true }).message
    const otherData = badTimeOtherData(now)
    const timeSigned = check.record.timeSigned
    return signTsig(reply, key, { now, error, requestMac: check.mac, timeSigned, otherData }).message
  }

  /** AXFR, or IXFR answered by the whole zone or by the SOA alone when the client is current (RFC 1995 §4). */
  private async transfer(
    msg: Buffer,
    transport: 'udp' | 'tcp',
    from: string | undefined,
    requestMac: Buffer | null,
    now: number,
  ): Promise<Buffer[]> {
    const key = this.tsigKey
    const sign = (messages: Buffer[]): Buffer[] => {
      if (!requestMac || !key) return messages
      let prior = requestMac
      return messages.map((m, i) => {
        const signed = signTsig(m, key, i === 0 ? { now, requestMac } : { now, priorMac: prior })
        prior = signed.mac
        return signed.message
      })
    }
    const refuse = (rcode: Rcode, why: string): Buffer[] => {
      // Anyone may try a transfer; only a refused secondary points to a configuration to fix.
      const level = this.acl.allows(from) ? 'warn' : 'debug'
      this.log[level]({ client: from, transport, why }, 'DNS zone transfer refused')
      return sign([errorReply(msg, rcode)])
    }
    let query: Packet
    try {
      query = dnsPacket.decode(msg)
    } catch {
      return refuse('FORMERR', 'unreadable request')
    }
    if (transport === 'udp') return refuse('REFUSED', 'over UDP')
    if (!this.acl.allows(from)) return refuse('REFUSED', 'client not in HOSTAPI_DNS_SECONDARIES')
    if (key && !requestMac) return refuse('REFUSED', 'not signed with HOSTAPI_DNS_TSIG_KEY')
    const question = query.questions?.[0]
    if (!question) return refuse('FORMERR', 'no question')
    const qname = question.name.toLowerCase().replace(/\.$/, '')
    let zone: ZoneSnapshot | null
    try {
      zone = await this.zoneFor(qname, true, true)
    } catch (err) {
      this.log.error({ err: String(err), qname }, 'DNS zone transfer failed')
      return sign([errorReply(msg, 'SERVFAIL')])
    }
    if (!zone || zone.name !== qname) return refuse('REFUSED', `zone ${qname} not served`)
    const records = transferRecords(zone)
    const clientSerial = question.type === 'IXFR' ? ixfrClientSerial(query) : null
    const current = clientSerial !== null && !serialNewer(zone.serial, clientSerial)
    const limit = TCP_MESSAGE_MAX - (requestMac && key ? tsigLength(key) : 0)
    const messages = await transferMessages(query.id ?? 0, question, current ? records.slice(0, 1) : records, limit)
    const sent = current ? 1 : records.length - 1
    const fields = { zone: zone.name, serial: zone.serial, client: from, type: question.type, records: sent }
    this.log.info({ ...fields, messages: messages.length }, 'DNS zone transfer')
    return sign(messages)
  }

  /** Answers one DNS message; null when it must be dropped (not a query, unreadable header). */
  handle(msg: Buffer, transport: 'udp' | 'tcp', reserve = 0, secondary = false): Promise<Buffer | null> {
    // A secondary decides by the SOA whether to transfer: it is answered at the committed state. Anyone else is
    // answered from the cache, so a flood of SOA queries cannot turn into as many database reads.
    const zoneFor = (qname: string, qtype: string) => this.zoneFor(qname, secondary && qtype === 'SOA', secondary)
    return answerQuery(msg, transport, zoneFor, this.log, reserve)
  }
}

const asList = (reply: Buffer | null): Buffer[] => (reply ? [reply] : [])
