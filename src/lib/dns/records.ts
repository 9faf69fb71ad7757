import { domainToASCII } from 'node:url'
import ipaddr from 'ipaddr.js'
import { errors } from '../../errors.js'
import { entryOf } from '../invariant.js'

/** The record types the API accepts. */
export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SRV', 'CAA', 'TLSA', 'SSHFP', 'DS'] as const
export type RecordType = (typeof RECORD_TYPES)[number]

/** A record as a client sends it: any case of type, a relative or absolute name, a presentation-form value. */
export interface RecordInput {
  type: string
  name: string | null | undefined
  value: string
  ttl?: number | null
}

/** A validated record in its stored form: upper-case type, FQDN name (lower case, no trailing dot), canonical value. */
export interface NormalisedRecord {
  type: RecordType
  name: string
  value: string
  ttl: number
}

/** How a record's hostnames are read. */
export interface NormaliseOptions {
  /**
   * Zone-file semantics: every name or hostname without a trailing dot is relative to the zone.
   * Without it (the API), a name or hostname that ends in the zone, or a hostname with a dot in it, is taken
   * as absolute, because API clients send `www.example.com` and `ghs.googlehosted.com` without the dot.
   */
  zoneFile?: boolean
}

export const DEFAULT_TTL = 3600
export const MIN_TTL = 60
export const MAX_TTL = 86400
/** The longest TXT value accepted (characters). */
export const MAX_TXT_LENGTH = 4000

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/

class RecordProblem extends Error {}
function problem(text: string): never {
  throw new RecordProblem(text)
}

/** `name` as a FQDN with a trailing dot, for output (`example.com` → `example.com.`). */
export function fqdnWithDot(name: string): string {
  return name.endsWith('.') ? name : `${name}.`
}

/** The zone (domain) name in stored form: lower case, no trailing dot, IDN as punycode. */
export function normaliseZone(zone: string): string {
  return toAscii(zone.trim().replace(/\.$/, '').toLowerCase())
}

/**
 * Validates one record for `zone` and returns its stored form. Every problem throws a 400 naming the record
 * (type and name) and the problem.
 */
export function normaliseRecord(zone: string, input: RecordInput, opts: NormaliseOptions = {}): NormalisedRecord {
  const apex = normaliseZone(zone)
  const rawType = typeof input.type === 'string' ? input.type.trim().toUpperCase() : ''
  const rawName = input.name == null ? '' : String(input.name).trim()
  const label = () => `${rawType || '(no type)'} ${rawName === '' ? '@' : rawName}`
  try {
    if (!(RECORD_TYPES as readonly string[]).includes(rawType)) {
      problem(rawType ? `unsupported type (use one of ${RECORD_TYPES.join(', ')})` : 'type is required')
    }
    const type = rawType as RecordType
    const name = ownerName(apex, rawName, !!opts.zoneFile)
    const ttl = ttlOf(input.ttl)
    if (typeof input.value !== 'string') problem('value is required')
    const value = normaliseValue(apex, type, name, input.value, !!opts.zoneFile)
    return { type, name, value, ttl }
  } catch (err) {
    if (err instanceof RecordProblem) throw errors.invalidDnsRecord(label(), err.message)
    throw err
  }
}

/**
 * Rules over a whole set of records of one zone (all already normalised): a CNAME is alone at its name
 * (one CNAME, no other type). Several records of the same type and name are allowed; exact duplicates
 * (type, name, value) are dropped. Returns the records to store, in their original order.
 */
export function checkRecordSet(zone: string, records: NormalisedRecord[]): NormalisedRecord[] {
  normaliseZone(zone)
  const byName = new Map<string, Set<string>>()
  const cnames = new Map<string, number>()
  const seen = new Set<string>()
  const out: NormalisedRecord[] = []
  for (const r of records) {
    const key = `${r.type}\u0000${r.name}\u0000${r.value}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push(r)
    const types = byName.get(r.name) ?? new Set<string>()
    types.add(r.type)
    byName.set(r.name, types)
    if (r.type === 'CNAME') cnames.set(r.name, (cnames.get(r.name) ?? 0) + 1)
  }
  for (const [name, count] of cnames) {
    if (count > 1) throw errors.cnameNotUnique(name)
    const others = [...entryOf(byName, name, 'the types at the CNAME owner')].filter((t) => t !== 'CNAME')
    if (others.length) {
      throw errors.cnameNotAlone(name, others)
    }
  }
  return out
}

/** True when `name` (FQDN, no trailing dot) is the zone apex or below it. */
export function inZone(zone: string, name: string): boolean {
  return name === zone || name.endsWith(`.${zone}`)
}

function ttlOf(ttl: number | null | undefined): number {
  if (ttl === undefined || ttl === null) return DEFAULT_TTL
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < MIN_TTL || ttl > MAX_TTL) {
    problem(`ttl must be an integer from ${MIN_TTL} to ${MAX_TTL}`)
  }
  return ttl
}

function toAscii(name: string): string {
  // Non-ASCII names (IDN) are stored as punycode; plain ASCII is left alone so `_` and `*` labels survive.
  if (!/[^\x00-\x7f]/.test(name)) return name
  const ascii = domainToASCII(name)
  if (!ascii) problem(`"${name}" is not a valid domain name`)
  return ascii
}

function checkLabels(name: string, what: string, allowWildcard: boolean): void {
  if (name.length > 253) problem(`${what} is longer than 253 characters`)
  const labels = name.split('.')
  labels.forEach((l, i) => {
    if (l === '*' && allowWildcard && i === 0) return
    if (l === '') problem(`${what} "${name}" has an empty label`)
    if (l.length > 63) problem(`${what} "${name}" has a label longer than 63 characters`)
    if (l.includes('*')) problem(`${what} "${name}": a wildcard "*" is only allowed as the whole leftmost label`)
    if (!LABEL.test(l))
      problem(`${what} "${name}" contains an invalid label "${l}" (letters, digits, "-" and "_" only)`)
  })
}

/** The owner name as FQDN, lower case, without the trailing dot. */
function ownerName(zone: string, raw: string, zoneFile: boolean): string {
  const lower = toAscii(raw.toLowerCase())
  let fqdn: string
  if (lower === '' || lower === '@' || lower === `${zone}.`) fqdn = zone
  else if (lower.endsWith('.')) fqdn = lower.slice(0, -1)
  else if (!zoneFile && inZone(zone, lower)) fqdn = lower
  else {
    // Without a trailing dot a name like `www.other.com` in zone `example.com` is a client's mistake far more
    // often than the relative name `www.other.com.example.com`: refuse it when it ends in the zone's TLD.
    const tld = zone.slice(zone.lastIndexOf('.') + 1)
    if (!zoneFile && lower.includes('.') && lower.endsWith(`.${tld}`)) problem(`name is outside the zone ${zone}`)
    fqdn = `${lower}.${zone}`
  }
  if (!inZone(zone, fqdn)) problem(`name is outside the zone ${zone}`)
  checkLabels(fqdn, 'name', true)
  return fqdn
}

/** A hostname inside a value (CNAME/NS target, MX exchange, SRV target) as FQDN with a trailing dot. */
function hostname(zone: string, raw: string, zoneFile: boolean, what: string, allowRoot = false): string {
  const lower = toAscii(raw.toLowerCase())
  if (lower === '') problem(`${what} is required`)
  if (lower === '.') {
    if (allowRoot) return '.'
    problem(`${what} cannot be the root "."`)
  }
  let fqdn: string
  if (lower === '@') fqdn = zone
  else if (lower.endsWith('.')) fqdn = lower.slice(0, -1)
  else if (zoneFile) fqdn = `${lower}.${zone}`
  else if (inZone(zone, lower) || lower.includes('.')) fqdn = lower
  else fqdn = `${lower}.${zone}`
  checkLabels(fqdn, what, false)
  return `${fqdn}.`
}

function u16(raw: string | undefined, what: string, max = 65535): number {
  if (raw === undefined || !/^\d{1,5}$/.test(raw) || Number(raw) > max)
    problem(`${what} must be an integer from 0 to ${max}`)
  return Number(raw)
}

function hex(parts: string[], what: string, lengths?: Record<number, number>, kind?: number): string {
  const h = parts.join('').toLowerCase()
  if (h === '' || !/^[0-9a-f]+$/.test(h) || h.length % 2 !== 0) problem(`${what} must be hexadecimal`)
  if (lengths && kind !== undefined && lengths[kind] !== undefined && h.length !== lengths[kind]) {
    problem(`${what} must be ${lengths[kind]} hexadecimal characters for type ${kind}`)
  }
  return h
}

function fields(value: string): string[] {
  return value.trim().split(/\s+/).filter(Boolean)
}

function normaliseValue(zone: string, type: RecordType, name: string, raw: string, zoneFile: boolean): string {
  const value = raw.trim()
  switch (type) {
    case 'A': {
      if (!/^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(value)) {
        problem(`value "${value}" is not an IPv4 address`)
      }
      return value
    }
    case 'AAAA': {
      if (value.includes('%') || !ipaddr.IPv6.isValid(value)) problem(`value "${value}" is not an IPv6 address`)
      return ipaddr.IPv6.parse(value).toRFC5952String()
    }
    case 'CNAME': {
      if (name === zone) problem('a CNAME record is not allowed at the zone apex')
      const [target, ...rest] = fields(value)
      if (target === undefined || rest.length > 0) problem('value must be one hostname')
      return hostname(zone, target, zoneFile, 'target')
    }
    case 'NS': {
      if (name === zone) problem("NS records at the zone apex come from the domain's nameservers")
      const [host, ...rest] = fields(value)
      if (host === undefined || rest.length > 0) problem('value must be one hostname')
      return hostname(zone, host, zoneFile, 'nameserver')
    }
    case 'MX': {
      const [prioText, host, ...rest] = fields(value)
      if (host === undefined || rest.length > 0) problem('value must be "<priority> <host>"')
      const prio = u16(prioText, 'priority')
      return `${prio} ${hostname(zone, host, zoneFile, 'mail server', true)}`
    }
    case 'SRV': {
      const [prioText, weightText, portText, target, ...rest] = fields(value)
      if (target === undefined || rest.length > 0) problem('value must be "<priority> <weight> <port> <target>"')
      const prio = u16(prioText, 'priority')
      const weight = u16(weightText, 'weight')
      const port = u16(portText, 'port')
      return `${prio} ${weight} ${port} ${hostname(zone, target, zoneFile, 'target', true)}`
    }
    case 'TXT':
      return txtValue(value)
    case 'CAA':
      return caaValue(value)
    case 'TLSA':
      return tlsaValue(value)
    case 'SSHFP':
      return sshfpValue(value)
    case 'DS':
      return dsValue(zone, name, value)
  }
}

/** `<flags> <tag> "<value>"`: flags up to 255, a tag of up to 15 characters, the value quoted. */
function caaValue(value: string): string {
  const [, flagsText, tagText, rest] = /^(\d{1,3})\s+([A-Za-z0-9]+)\s+(.*)$/s.exec(value) ?? []
  if (flagsText === undefined || tagText === undefined || rest === undefined)
    problem('value must be "<flags> <tag> \\"<value>\\""')
  const flags = Number(flagsText)
  if (flags > 255) problem('flags must be an integer from 0 to 255')
  const tag = tagText.toLowerCase()
  if (tag.length > 15) problem('tag is longer than 15 characters')
  let v = rest.trim()
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = unescapeQuoted(v.slice(1, -1))
  if (v === '' && tag !== 'issue' && tag !== 'issuewild') problem('value is required')
  if (/[\x00-\x1f\x7f]/.test(v)) problem('value contains control characters')
  return `${flags} ${tag} "${escapeQuoted(v)}"`
}

/** `<usage> <selector> <matching type> <hex data>`, the data as long as its matching type says. */
function tlsaValue(value: string): string {
  const f = fields(value)
  if (f.length < 4) problem('value must be "<usage> <selector> <matching type> <hex data>"')
  const usage = u16(f[0], 'usage', 255)
  const selector = u16(f[1], 'selector', 255)
  const mtype = u16(f[2], 'matching type', 255)
  if (usage > 3) problem('usage must be 0, 1, 2 or 3')
  if (selector > 1) problem('selector must be 0 or 1')
  if (mtype > 2) problem('matching type must be 0, 1 or 2')
  return `${usage} ${selector} ${mtype} ${hex(f.slice(3), 'certificate data', { 1: 64, 2: 128 }, mtype)}`
}

/** `<algorithm> <fingerprint type> <hex fingerprint>`, the fingerprint as long as its type says. */
function sshfpValue(value: string): string {
  const f = fields(value)
  if (f.length < 3) problem('value must be "<algorithm> <fingerprint type> <hex fingerprint>"')
  const alg = u16(f[0], 'algorithm', 255)
  const fpType = u16(f[1], 'fingerprint type', 255)
  if (![1, 2, 3, 4, 6].includes(alg)) problem('algorithm must be 1 (RSA), 2 (DSA), 3 (ECDSA), 4 (Ed25519) or 6 (Ed448)')
  if (![1, 2].includes(fpType)) problem('fingerprint type must be 1 (SHA-1) or 2 (SHA-256)')
  return `${alg} ${fpType} ${hex(f.slice(2), 'fingerprint', { 1: 40, 2: 64 }, fpType)}`
}

/** `<key tag> <algorithm> <digest type> <hex digest>`, never at the zone apex. */
function dsValue(zone: string, name: string, value: string): string {
  if (name === zone) problem('a DS record is not allowed at the zone apex (it belongs in the parent zone)')
  const f = fields(value)
  if (f.length < 4) problem('value must be "<key tag> <algorithm> <digest type> <hex digest>"')
  const keyTag = u16(f[0], 'key tag')
  const alg = u16(f[1], 'algorithm', 255)
  const digestType = u16(f[2], 'digest type', 255)
  if (![1, 2, 4].includes(digestType)) problem('digest type must be 1 (SHA-1), 2 (SHA-256) or 4 (SHA-384)')
  return `${keyTag} ${alg} ${digestType} ${hex(f.slice(3), 'digest', { 1: 40, 2: 64, 4: 96 }, digestType)}`
}

/**
 * TXT input is either plain text (stored as is) or one or more quoted strings (`"v=spf1 …" "more"`), which are
 * joined after unescaping `\"`, `\\` and `\DDD`.
 */
function txtValue(value: string): string {
  const quoted = splitQuotedStrings(value)
  const text = quoted ?? value
  if (text.length === 0) problem('value is required')
  if (text.length > MAX_TXT_LENGTH) problem(`value is longer than ${MAX_TXT_LENGTH} characters`)
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(text)) problem('value contains control characters')
  return text
}

/**
 * When `value` is a sequence of quoted strings only, their unescaped concatenation; otherwise null.
 * `\DDD` escapes are bytes, so the result is decoded as UTF-8. Linear: the text between escapes is encoded
 * a run at a time.
 */
export function splitQuotedStrings(value: string): string | null {
  const s = value.trim()
  if (!s.startsWith('"')) return null
  const parts: Buffer[] = []
  let escaped: number[] = []
  const text = (from: number, to: number) => {
    if (escaped.length) parts.push(Buffer.from(escaped))
    escaped = []
    if (to > from) parts.push(Buffer.from(s.slice(from, to), 'utf8'))
  }
  let i = 0
  while (i < s.length) {
    while (i < s.length && /\s/.test(s.charAt(i))) i++
    if (i >= s.length) break
    if (s[i] !== '"') return null
    i++
    let run = i
    let closed = false
    while (i < s.length) {
      const c = s.charCodeAt(i)
      if (c === 0x5c) {
        text(run, i)
        const d = /^\d{3}/.exec(s.slice(i + 1, i + 4))
        if (d && Number(d[0]) <= 255) {
          escaped.push(Number(d[0]))
          i += 4
        } else {
          // The escaped character (a whole code point) is taken as it is; a `\` at the end escapes nothing.
          const escapedChar = s.codePointAt(i + 1)
          if (escapedChar === undefined) return null
          run = i + 1
          i += 1 + String.fromCodePoint(escapedChar).length
          text(run, i)
        }
        run = i
        continue
      }
      if (c === 0x22) {
        text(run, i)
        closed = true
        i++
        break
      }
      i++
    }
    if (!closed) return null
  }
  text(i, i)
  const only = parts.length === 1 ? parts[0] : undefined
  return (only ?? Buffer.concat(parts)).toString('utf8')
}

/**
 * TXT text as DNS character-strings: UTF-8 chunks of at most 255 bytes, never splitting a character. The text is
 * encoded once and cut at character starts (views of that one buffer).
 */
export function txtChunks(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= 255) return [bytes]
  const out: Buffer[] = []
  let start = 0
  while (bytes.length - start > 255) {
    let end = start + 255
    // Back to the start of the character that would be cut (UTF-8 continuation bytes are 10xxxxxx).
    while ((bytes.readUInt8(end) & 0xc0) === 0x80) end--
    out.push(bytes.subarray(start, end))
    start = end
  }
  out.push(bytes.subarray(start))
  return out
}

/** Escapes `\` and `"` for a quoted presentation string. */
export function escapeQuoted(text: string): string {
  return text.replace(/[\\"]/g, (c) => `\\${c}`)
}

function unescapeQuoted(text: string): string {
  return text.replace(/\\(\d{3}|.)/g, (_m, c: string) => (c.length === 3 ? String.fromCharCode(Number(c)) : c))
}
