import { isIPv4 } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { ServedZone, ZoneRecord } from './dns.js'
import { servedNameservers } from './authority.js'
import { escapeQuoted, txtChunks } from '../../lib/dns/records.js'
import { apexNameservers, soaFor } from '../../lib/dns/zone-file.js'

/** One RRset as PowerDNS's API reads and writes it. */
export interface PowerDnsRRset {
  /** Fully qualified, lower case, with the trailing dot. */
  name: string
  type: string
  ttl: number
  records: { content: string; disabled: boolean }[]
}

/** A domain name as a zone apex: trimmed, lower case, without the trailing dot. */
export const apexOf = (domain: string): string => domain.trim().toLowerCase().replace(/\.$/, '')

const dot = (h: string) => (h.endsWith('.') ? h.toLowerCase() : `${h.toLowerCase()}.`)
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
  const accepted: { r: ZoneRecord; name: string; content: string; types: Set<string> }[] = []
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
        const types = typesAt.get(name) ?? new Set<string>()
        typesAt.set(name, types.add(r.type))
        accepted.push({ r, name, content, types })
      }
    }
  }
  // A CNAME beside other data is refused by PowerDNS; the other data wins, as in the built-in server's answers.
  for (const { r, name, content, types } of accepted) {
    const fqdn = `${name}.`
    if (r.type === 'CNAME') {
      const first = sets.get(`${fqdn} CNAME`)?.records[0]
      if (types.size > 1) onSkipped(r, 'a CNAME beside other data at its name')
      else if (first && first.content !== content) {
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

/** The key of an RRset among a zone's: its name and type. */
export const rrsetKey = (s: { name: string; type: string }): string => `${s.name} ${s.type}`

/** True when PowerDNS's RRset holds what hostapi's does (same TTL and contents, in any order). */
export function sameRRset(a: PowerDnsRRset, b: PowerDnsRRset): boolean {
  if (a.ttl !== b.ttl || a.records.length !== b.records.length) return false
  const contents = (s: PowerDnsRRset) => s.records.map((r) => `${r.disabled ? '!' : ''}${r.content}`).sort()
  const x = contents(a)
  const y = contents(b)
  return x.every((c, i) => c === y[i])
}
