import { isIPv4, isIPv6 } from 'node:net'
import type { Answer } from 'dns-packet'
import { splitQuotedStrings, txtChunks } from '../../lib/dns/records.js'
import { apexNameservers, soaFor, type Soa } from '../../lib/dns/zone-file.js'
import type { ServedZone, ZoneRecord } from './dns.js'

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
      return { preference: Number(f[0]), exchange: noDot(f[1]!) }
    case 'SRV':
      return { priority: Number(f[0]), weight: Number(f[1]), port: Number(f[2]), target: noDot(f[3]!) }
    case 'TXT':
      return txtChunks(value)
    case 'CAA': {
      const m = /^(\d+) (\S+) (.*)$/s.exec(value)!
      return { flags: Number(m[1]), tag: m[2], value: splitQuotedStrings(m[3]!) ?? m[3] }
    }
    case 'TLSA':
      return {
        usage: Number(f[0]),
        selector: Number(f[1]),
        matchingType: Number(f[2]),
        certificate: Buffer.from(f[3]!, 'hex'),
      }
    case 'SSHFP':
      return { algorithm: Number(f[0]), hash: Number(f[1]), fingerprint: f[2] }
    case 'DS':
      return {
        keyTag: Number(f[0]),
        algorithm: Number(f[1]),
        digestType: Number(f[2]),
        digest: Buffer.from(f[3]!, 'hex'),
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

/** Builds the snapshot of a served zone from its stored records. Records that cannot be encoded are skipped. */
export function buildSnapshot(
  zone: ServedZone,
  records: ZoneRecord[],
  onBadRecord: (r: { type: string; name: string; value: string }, err: unknown) => void = () => undefined,
): ZoneSnapshot {
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
  for (const r of records) {
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
  return { id: zone.id, name: apex, serial: zone.serial, nameserversJson: zone.nameserversJson, soa, rrsets, names }
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

const rr = (name: string, r: WireRecord): Answer =>
  ({ name, type: r.type, class: 'IN', ttl: r.ttl, data: r.data }) as Answer

/** Every record of a zone in transfer order (RFC 5936 §2.2): the SOA, every other record, the SOA again. */
export function transferRecords(zone: ZoneSnapshot): Answer[] {
  const soa = rr(zone.name, zone.rrsets.get(zone.name)!.get('SOA')![0]!)
  const out: Answer[] = [soa]
  for (const [name, byType] of zone.rrsets) {
    for (const [type, list] of byType) {
      if (!(type === 'SOA' && name === zone.name)) out.push(...list.map((r) => rr(name, r)))
    }
  }
  out.push(soa)
  return out
}

/** The SOA for a negative answer, with the negative-caching TTL (RFC 2308). */
function negativeSoa(zone: ZoneSnapshot): Answer {
  const soa = zone.rrsets.get(zone.name)!.get('SOA')![0]!
  return rr(zone.name, { ...soa, ttl: Math.min(zone.soa.ttl, zone.soa.minimum) })
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
      const ns = zone.rrsets.get(cut)!.get('NS')!
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
    const cname = rrsets.get('CNAME')
    if (cname) {
      res.answers.push(rr(name, cname[0]!))
      const target = (cname[0]!.data as string).toLowerCase()
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
