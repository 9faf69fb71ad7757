import { isIPv4, isIPv6 } from 'node:net'
import type { Answer } from 'dns-packet'
import { splitQuotedStrings, txtChunks } from '../../lib/dns/records.js'
import { apexNameservers, soaFor, type Soa } from '../../lib/dns/zone-file.js'
import { coveringNsec, nsecSuccessor } from '../../lib/dns/dnssec.js'
import type { ServedZone, ZoneRecord } from './dns.js'
import { ZoneSigner } from './signer.js'
import { TimeSlices } from '../../lib/turns.js'

/** One record as the server answers it: type, TTL and the `dns-packet` rdata, prepared once per zone load. */
export interface WireRecord {
  type: string
  ttl: number
  data: unknown
}

/** An immutable, answer-ready copy of one served zone. */
export interface ZoneSnapshot {
  id: number
  /** The apex: lower case, no trailing dot. */
  name: string
  serial: number
  /** The raw nameservers JSON the snapshot was built from (a change invalidates it). */
  nameserversJson: string
  soa: Soa
  /** owner name → type → records (the apex SOA and NS included). */
  rrsets: Map<string, Map<string, WireRecord[]>>
  /** Every name that exists: owners and their ancestors down to the apex (empty non-terminals). */
  names: Set<string>
  /** Signs answers when DNSSEC is on for the zone (its DNSKEY is then in `rrsets`); null when it is off. */
  signer: ZoneSigner | null
}

/** The sections of one authoritative answer. */
export interface Resolution {
  rcode: 'NOERROR' | 'NXDOMAIN'
  authoritative: boolean
  answers: Answer[]
  authorities: Answer[]
  additionals: Answer[]
}

const noDot = (h: string) => (h === '.' ? '' : h.replace(/\.$/, ''))

/** A stored value without the fields its type has (never so when written through the record rules). */
function malformed(type: string, value: string): never {
  throw new Error(`stored ${type} value "${value}" lacks fields`)
}

/** Converts a stored record value into `dns-packet` rdata. */
export function wireData(type: string, value: string): unknown {
  const f = value.split(' ')
  switch (type) {
    case 'A':
    case 'AAAA':
      return value
    case 'CNAME':
    case 'NS':
      return noDot(value)
    case 'MX':
      return { preference: Number(f[0]), exchange: noDot(f[1] ?? malformed(type, value)) }
    case 'SRV': {
      const target = noDot(f[3] ?? malformed(type, value))
      return { priority: Number(f[0]), weight: Number(f[1]), port: Number(f[2]), target }
    }
    case 'TXT':
      return txtChunks(value)
    case 'CAA': {
      const [, flags, tag, text] = /^(\d+) (\S+) (.*)$/s.exec(value) ?? []
      if (text === undefined) malformed(type, value)
      return { flags: Number(flags), tag, value: splitQuotedStrings(text) ?? text }
    }
    case 'TLSA':
      return {
        usage: Number(f[0]),
        selector: Number(f[1]),
        matchingType: Number(f[2]),
        certificate: Buffer.from(f[3] ?? malformed(type, value), 'hex'),
      }
    case 'SSHFP':
      return { algorithm: Number(f[0]), hash: Number(f[1]), fingerprint: f[2] }
    case 'DS':
      return {
        keyTag: Number(f[0]),
        algorithm: Number(f[1]),
        digestType: Number(f[2]),
        digest: Buffer.from(f[3] ?? malformed(type, value), 'hex'),
      }
    default:
      throw new Error(`unsupported record type ${type}`)
  }
}

/** A served zone's nameserver as stored; the glue addresses are unchecked. */
export interface ServedNameserver {
  hostname: string
  ipv4?: unknown
  ipv6?: unknown
}

/** The nameservers of a served zone from its stored JSON; bad data gives none or is skipped. */
export function servedNameservers(zone: ServedZone): ServedNameserver[] {
  try {
    const parsed: unknown = JSON.parse(zone.nameserversJson)
    if (!Array.isArray(parsed)) return []
    return parsed
      .map((n: unknown) => (typeof n === 'string' ? { hostname: n } : (n as ServedNameserver)))
      .filter((n): n is ServedNameserver => typeof n?.hostname === 'string' && n.hostname !== '')
  } catch {
    return []
  }
}

/**
 * Builds the snapshot of a served zone from its stored records. Records that cannot be encoded are skipped. A large
 * zone is built in slices, the event loop given a turn between them, so its rebuild does not hold every query and
 * request.
 */
export async function buildSnapshot(
  zone: ServedZone,
  records: ZoneRecord[],
  onBadRecord: (r: { type: string; name: string; value: string }, err: unknown) => void = () => undefined,
): Promise<ZoneSnapshot> {
  const apex = zone.name.toLowerCase()
  const nameservers = servedNameservers(zone)
  const soa = soaFor(apex, { serial: zone.serial, nameservers })
  const rrsets = new Map<string, Map<string, WireRecord[]>>()
  const names = new Set<string>([apex])
  const add = (name: string, rec: WireRecord) => {
    let byType = rrsets.get(name)
    if (!byType) {
      byType = new Map()
      rrsets.set(name, byType)
    }
    const list = byType.get(rec.type) ?? []
    list.push(rec)
    byType.set(rec.type, list)
    for (let n = name; n !== apex && n.length > apex.length; n = n.slice(n.indexOf('.') + 1)) names.add(n)
  }
  add(apex, { type: 'SOA', ttl: soa.ttl, data: soaData(soa) })
  for (const ns of apexNameservers({ serial: zone.serial, nameservers })) {
    add(apex, { type: 'NS', ttl: soa.ttl, data: noDot(ns) })
  }
  const seen = new Set<string>()
  const slices = new TimeSlices()
  let i = 0
  for (const r of records) {
    if (i++ % 256 === 255 && slices.due) await slices.next()
    const name = r.name.toLowerCase()
    if (name !== apex && !name.endsWith(`.${apex}`)) continue
    // The apex SOA and NS are the domain's own; stored ones would contradict them.
    if (name === apex && (r.type === 'NS' || r.type === 'SOA')) continue
    const key = `${r.type} ${name} ${r.value}`
    if (seen.has(key)) continue
    seen.add(key)
    try {
      add(name, { type: r.type, ttl: r.ttl, data: wireData(r.type, r.value) })
    } catch (err) {
      onBadRecord(r, err)
    }
  }
  const signer = zone.dnssec ? new ZoneSigner(apex, zone.dnssec) : null
  if (signer) {
    const { flags, algorithm, publicKey } = signer.dnskey
    add(apex, { type: 'DNSKEY', ttl: soa.ttl, data: { flags, algorithm, key: publicKey } })
  }
  // In-zone nameservers answer with the addresses the domain gives for them (glue), unless records say otherwise.
  for (const ns of nameservers) {
    const host = noDot(ns.hostname.toLowerCase())
    if (host !== apex && !host.endsWith(`.${apex}`)) continue
    const at = rrsets.get(host)
    if (at?.has('CNAME')) continue
    if (typeof ns.ipv4 === 'string' && isIPv4(ns.ipv4) && !at?.has('A'))
      add(host, { type: 'A', ttl: soa.ttl, data: ns.ipv4 })
    if (typeof ns.ipv6 === 'string' && isIPv6(ns.ipv6) && !at?.has('AAAA'))
      add(host, { type: 'AAAA', ttl: soa.ttl, data: ns.ipv6 })
  }
  const { id, serial, nameserversJson } = zone
  return { id, name: apex, serial, nameserversJson, soa, rrsets, names, signer }
}

function soaData(soa: Soa) {
  return {
    mname: noDot(soa.mname),
    rname: noDot(soa.rname),
    serial: soa.serial >>> 0,
    refresh: soa.refresh,
    retry: soa.retry,
    expire: soa.expire,
    minimum: soa.minimum,
  }
}

/** Whether `r` (past the end: undefined) belongs to the RRset of `first`. */
const sameRrset = (r: Answer | undefined, first: Answer): boolean =>
  r !== undefined && r.name === first.name && r.type === first.type

const rr = (name: string, r: WireRecord): Answer =>
  ({ name, type: r.type, class: 'IN', ttl: r.ttl, data: r.data }) as Answer

/** The apex SOA of a snapshot: `buildSnapshot` puts it first. */
function apexSoa(zone: ZoneSnapshot): WireRecord {
  const soa = zone.rrsets.get(zone.name)?.get('SOA')?.[0]
  if (soa === undefined) throw new Error(`the snapshot of zone ${zone.name} has no SOA`)
  return soa
}

/** The zone's SOA record, as a transfer and a NOTIFY send it. */
export function soaRecord(zone: ZoneSnapshot): Answer {
  return rr(zone.name, apexSoa(zone))
}

/** Every record of a zone in transfer order (RFC 5936 §2.2): the SOA, every other record, the SOA again. */
export function transferRecords(zone: ZoneSnapshot): Answer[] {
  const soa = soaRecord(zone)
  const out: Answer[] = [soa]
  for (const [name, byType] of zone.rrsets) {
    for (const [type, list] of byType) {
      // Secondaries get the zone unsigned: a DNSKEY without its signatures would make their answers bogus.
      if (type === 'DNSKEY') continue
      if (!(type === 'SOA' && name === zone.name)) out.push(...list.map((r) => rr(name, r)))
    }
  }
  out.push(soa)
  return out
}

/** The SOA for a negative answer, with the negative-caching TTL (RFC 2308). */
function negativeSoa(zone: ZoneSnapshot): Answer {
  return rr(zone.name, { ...apexSoa(zone), ttl: Math.min(zone.soa.ttl, zone.soa.minimum) })
}

/** The nearest delegation (NS below the apex) at or above `name`; for DS the cut at `name` itself is ours to answer. */
function findCut(zone: ZoneSnapshot, name: string, qtype: string): string | null {
  const labels = name
    .slice(0, name.length - zone.name.length)
    .split('.')
    .filter(Boolean)
  for (let i = labels.length - 1; i >= 0; i--) {
    const candidate = `${labels.slice(i).join('.')}.${zone.name}`
    if (candidate === name && qtype === 'DS') continue
    if (zone.rrsets.get(candidate)?.has('NS')) return candidate
  }
  return null
}

/** The longest existing ancestor of a name that does not exist. */
function closestEncloser(zone: ZoneSnapshot, name: string): string {
  let n = name
  while (n !== zone.name) {
    n = n.slice(n.indexOf('.') + 1)
    if (zone.names.has(n)) return n
  }
  return zone.name
}

function glue(zone: ZoneSnapshot, targets: string[]): Answer[] {
  const out: Answer[] = []
  for (const t of targets) {
    if (t !== zone.name && !t.endsWith(`.${zone.name}`)) continue
    for (const type of ['A', 'AAAA']) for (const r of zone.rrsets.get(t)?.get(type) ?? []) out.push(rr(t, r))
  }
  return out
}

const MAX_CHAIN = 8

/**
 * Answers `qname`/`qtype` from one zone (RFC 1034 §4.3.2 without DNSSEC): exact matches, CNAME chasing inside
 * the zone, wildcards, referrals at delegations, NXDOMAIN and NODATA with the SOA in the authority section.
 * `qname` is lower case without the trailing dot and inside the zone.
 */
export function resolve(zone: ZoneSnapshot, qname: string, qtype: string): Resolution {
  const res: Resolution = { rcode: 'NOERROR', authoritative: true, answers: [], authorities: [], additionals: [] }
  const visited = new Set<string>()
  let name = qname
  for (let hop = 0; hop <= MAX_CHAIN; hop++) {
    visited.add(name)
    const cut = findCut(zone, name, qtype)
    if (cut) {
      // A referral: the child zone is authoritative for this name.
      const ns = zone.rrsets.get(cut)?.get('NS')
      if (ns === undefined) throw new Error(`the delegation ${cut} of zone ${zone.name} has no NS records`)
      if (res.answers.length === 0) res.authoritative = false
      res.authorities.push(...ns.map((r) => rr(cut, r)))
      res.additionals.push(
        ...glue(
          zone,
          ns.map((r) => r.data as string),
        ),
      )
      return res
    }
    let rrsets = zone.rrsets.get(name)
    if (!zone.names.has(name)) {
      const wildcard = `*.${closestEncloser(zone, name)}`
      rrsets = zone.rrsets.get(wildcard)
      if (!rrsets) {
        res.rcode = 'NXDOMAIN'
        res.authorities.push(negativeSoa(zone))
        return res
      }
    }
    if (!rrsets) {
      res.authorities.push(negativeSoa(zone))
      return res
    }
    if (qtype === 'ANY') {
      for (const list of rrsets.values()) res.answers.push(...list.map((r) => rr(name, r)))
      return res
    }
    const set = rrsets.get(qtype)
    if (set) {
      res.answers.push(...set.map((r) => rr(name, r)))
      if (qtype === 'NS' && name === zone.name)
        res.additionals.push(
          ...glue(
            zone,
            set.map((r) => r.data as string),
          ),
        )
      return res
    }
    const cname = rrsets.get('CNAME')?.[0]
    if (cname) {
      res.answers.push(rr(name, cname))
      const target = (cname.data as string).toLowerCase()
      const inside = target === zone.name || target.endsWith(`.${zone.name}`)
      if (!inside || visited.has(target)) return res
      name = target
      continue
    }
    res.authorities.push(negativeSoa(zone))
    return res
  }
  return res
}

/**
 * Adds DNSSEC to an answer from a signed zone (RFC 4035 §3.1), for a query with the DO bit: an RRSIG after every
 * RRset of the answer and authority sections (delegation NS and glue aside), the DS of a delegation or the NSEC
 * proving it has none, and authenticated denial with minimally covering NSECs made on the fly (RFC 4470 "white
 * lies"): at the name for NODATA, around the next closer name and the wildcard for NXDOMAIN, around the next closer
 * name for a wildcard answer. Does nothing for an unsigned zone.
 */
export function signResolution(zone: ZoneSnapshot, qname: string, qtype: string, res: Resolution): void {
  const signer = zone.signer
  if (!signer) return
  const negativeTtl = Math.min(zone.soa.ttl, zone.soa.minimum)
  const withSignatures = (records: Answer[]): Answer[] => {
    const out: Answer[] = []
    let i = 0
    for (let first = records[i]; first !== undefined; first = records[i]) {
      let j = i + 1
      while (sameRrset(records[j], first)) j++
      const set = records.slice(i, j) as (Answer & { ttl: number; data: unknown })[]
      const name = first.name
      // A name that does not exist was answered from the wildcard of its closest encloser.
      const owner = zone.names.has(name) ? name : `*.${closestEncloser(zone, name)}`
      const stored = zone.rrsets.get(owner)?.get(first.type)
      const originalTTL = stored ? Math.max(...stored.map((r) => r.ttl)) : Math.max(...set.map((r) => r.ttl))
      const servedTtl = Math.min(...set.map((r) => r.ttl))
      const data = signer.sign(
        owner,
        first.type,
        originalTTL,
        set.map((r) => r.data),
        String(set.length),
      )
      out.push(...set, rr(name, { type: 'RRSIG', ttl: servedTtl, data }))
      i = j
    }
    return out
  }
  const nsec = (owner: string, next: string, types: string[]): Answer[] => {
    const data = { nextDomain: next, rrtypes: [...types, 'RRSIG', 'NSEC'] }
    const sig = signer.sign(owner, 'NSEC', negativeTtl, [data], `${next}\n${types.join(' ')}`)
    return [
      rr(owner, { type: 'NSEC', ttl: negativeTtl, data }),
      rr(owner, { type: 'RRSIG', ttl: negativeTtl, data: sig }),
    ]
  }
  // The NSEC at a name that exists: its types (at a delegation only NS and DS are the zone's own).
  const nsecAt = (name: string): Answer[] => {
    let types = [...(zone.rrsets.get(name)?.keys() ?? [])]
    if (name !== zone.name && types.includes('NS')) types = types.filter((t) => t === 'NS' || t === 'DS')
    return nsec(name, nsecSuccessor(name), types)
  }
  // The NSEC covering a name that does not exist: around its next closer name below its closest encloser.
  const covering = (name: string): Answer[] => {
    const encloser = closestEncloser(zone, name)
    const below = name.slice(0, name.length - encloser.length - 1)
    const c = coveringNsec(below.slice(below.lastIndexOf('.') + 1), encloser)
    return c ? nsec(c.owner, c.next, []) : []
  }
  const proofs: Answer[] = []
  const prove = (records: Answer[]) => {
    for (const r of records) if (!proofs.some((p) => p.type === r.type && p.name === r.name)) proofs.push(r)
  }

  res.answers = withSignatures(res.answers)
  const cut = res.authorities.find((a) => a.type === 'NS')?.name
  if (cut !== undefined) {
    const ds = zone.rrsets.get(cut)?.get('DS')
    const delegation = ds ? withSignatures(ds.map((r) => rr(cut, r))) : nsecAt(cut)
    res.authorities = [...res.authorities, ...delegation]
    return
  }
  // Where the answer ends: the last CNAME's target inside the zone, else the query name.
  let name = qname
  for (const a of res.answers)
    if (a.type === 'CNAME' && a.name === name) name = String((a as Answer & { data: unknown }).data).toLowerCase()
  const negative = res.authorities.some((a) => a.type === 'SOA')
  res.authorities = withSignatures(res.authorities)
  if (res.rcode === 'NXDOMAIN') {
    prove(covering(name))
    prove(covering(`*.${closestEncloser(zone, name)}`))
  } else if (negative && zone.names.has(name)) {
    if (qtype === 'NSEC') {
      // The NSEC at the name is what was asked for: an answer, not a denial.
      res.answers.push(...nsecAt(name))
      res.authorities = []
    } else prove(nsecAt(name))
  } else if (negative) {
    prove(covering(name))
    prove(nsecAt(`*.${closestEncloser(zone, name)}`))
  }
  // A wildcard answer is valid only with the proof that the name asked for does not exist itself.
  for (const a of res.answers) if (a.type !== 'RRSIG' && !zone.names.has(a.name)) prove(covering(a.name))
  res.authorities.push(...proofs)
}
