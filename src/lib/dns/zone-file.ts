import { ApiError, errors } from '../../errors.js'
import {
  DEFAULT_TTL,
  RECORD_TYPES,
  escapeQuoted,
  normaliseRecord,
  normaliseZone,
  splitQuotedStrings,
  txtChunks,
  type NormalisedRecord,
  type RecordType,
} from './records.js'

/** The SOA timers of a zone (seconds). */
export interface SoaTimers {
  refresh: number
  retry: number
  expire: number
  /** The negative-caching TTL (RFC 2308); kept short so a fresh ACME challenge is not hidden by a cached NXDOMAIN. */
  minimum: number
  /** The TTL of the SOA and apex NS records. */
  ttl: number
}

/** What a zone has besides its records: the SOA serial (domains.zone_serial) and the domain's nameservers. */
export interface ZoneMeta {
  serial: number
  nameservers: { hostname: string }[]
  /** Overrides of the SOA timers and names. */
  soa?: Partial<SoaTimers & { mname: string; rname: string }>
}

/** A zone's SOA record, fully resolved. */
export interface Soa extends SoaTimers {
  /** Primary nameserver, FQDN with the trailing dot. */
  mname: string
  /** Responsible mailbox in DNS form, FQDN with the trailing dot. */
  rname: string
  serial: number
}

/** Default SOA timers of every zone served or exported. */
export const DEFAULT_SOA_TIMERS: SoaTimers = { refresh: 10800, retry: 3600, expire: 1209600, minimum: 300, ttl: 3600 }

const dot = (h: string) => (h.endsWith('.') ? h.toLowerCase() : `${h.toLowerCase()}.`)

/** The SOA of `zone`: primary = the first nameserver of the domain, mailbox `hostmaster.<zone>.`. */
export function soaFor(zone: string, meta: ZoneMeta): Soa {
  const apex = normaliseZone(zone)
  const first = meta.nameservers[0]?.hostname
  return {
    ...DEFAULT_SOA_TIMERS,
    ...meta.soa,
    mname: dot(meta.soa?.mname ?? first ?? `ns1.${apex}`),
    rname: dot(meta.soa?.rname ?? `hostmaster.${apex}`),
    serial: meta.serial,
  }
}

/** The apex NS targets of a zone (FQDN with dot, lower case, duplicates removed, order kept). */
export function apexNameservers(meta: ZoneMeta): string[] {
  return [...new Set(meta.nameservers.map((n) => dot(n.hostname)).filter((h) => h !== '.'))]
}

/** Orders records for output: the apex first, then names in DNS canonical order, then by type; stable otherwise. */
export function sortRecords<T extends { name: string; type: string }>(zone: string, records: T[]): T[] {
  const apex = normaliseZone(zone)
  const key = (name: string) =>
    name === apex
      ? []
      : name
          .slice(0, -(apex.length + 1))
          .split('.')
          .reverse()
  const typeRank = (t: string) => {
    const i = (RECORD_TYPES as readonly string[]).indexOf(t)
    return i === -1 ? RECORD_TYPES.length : i
  }
  return records
    .map((r, i) => ({ r, i, k: key(r.name) }))
    .sort((a, b) => {
      for (let j = 0; ; j++) {
        const x = a.k[j]
        const y = b.k[j]
        if (x === undefined || y === undefined) break
        if (x !== y) return x < y ? -1 : 1
      }
      if (a.k.length !== b.k.length) return a.k.length - b.k.length
      return typeRank(a.r.type) - typeRank(b.r.type) || a.i - b.i
    })
    .map((x) => x.r)
}

/** A record value in zone-file presentation form (TXT quoted and split into 255-byte strings). */
export function presentValue(type: string, value: string): string {
  if (type !== 'TXT') return value
  return txtChunks(value)
    .map((b) => `"${escapeQuoted(b.toString('utf8'))}"`)
    .join(' ')
}

/**
 * Renders the zone as BIND text: `$ORIGIN`, `$TTL`, the SOA (serial from the domain), the apex NS from the
 * domain's nameservers, then the records in a stable order. Owner names are relative to the origin.
 */
export function renderZone(zone: string, meta: ZoneMeta, records: NormalisedRecord[]): string {
  const apex = normaliseZone(zone)
  const soa = soaFor(apex, meta)
  const rel = (name: string) =>
    name === apex ? '@' : name.endsWith(`.${apex}`) ? name.slice(0, -(apex.length + 1)) : `${name}.`
  const rows: [string, number, string, string][] = apexNameservers(meta).map((ns) => ['@', soa.ttl, 'NS', ns])
  for (const r of sortRecords(apex, records)) rows.push([rel(r.name), r.ttl, r.type, presentValue(r.type, r.value)])
  // A loop, not Math.max(...rows): a spread of 50,000 arguments is slow and near the engine's limit.
  let width = 8
  for (const r of rows) width = Math.max(width, r[0].length + 1)
  const line = (owner: string, ttl: number, type: string, value: string) =>
    `${owner.padEnd(width)}${String(ttl).padEnd(7)}IN  ${type.padEnd(6)}${value}`
  const pad = ' '.repeat(width + 7 + 4 + 6)
  return [
    `$ORIGIN ${apex}.`,
    `$TTL ${DEFAULT_TTL}`,
    line('@', soa.ttl, 'SOA', `${soa.mname} ${soa.rname} (`),
    `${pad}${soa.serial} ; serial`,
    `${pad}${soa.refresh} ; refresh`,
    `${pad}${soa.retry} ; retry`,
    `${pad}${soa.expire} ; expire`,
    `${pad}${soa.minimum} ) ; minimum`,
    ...rows.map((r) => line(...r)),
    '',
  ].join('\n')
}

interface Token {
  /** The text, unescaped (quoted strings: their content). */
  text: string
  /** Quoted strings keep their source form (with quotes) so `\DDD` bytes survive. */
  raw: string
  quoted: boolean
}

interface Entry {
  line: number
  blankOwner: boolean
  tokens: Token[]
}

class ZoneProblem extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message)
  }
}

const WORD_END = new Set([' ', '\t', '\r', '\n', ';', '(', ')', '"'])

/** Splits zone text into logical entries: comments dropped, parentheses joined across lines, quotes kept whole. */
function tokenize(text: string): Entry[] {
  const entries: Entry[] = []
  let line = 1
  let depth = 0
  let parenLine = 0
  let entry: Entry | null = null
  let atLineStart = true
  const finish = () => {
    if (entry?.tokens.length) entries.push(entry)
    entry = null
  }
  const current = (): Entry => (entry ??= { line, blankOwner: false, tokens: [] })
  let i = 0
  while (i < text.length) {
    const c = text.charAt(i)
    if (atLineStart && depth === 0) {
      finish()
      entry = { line, blankOwner: c === ' ' || c === '\t', tokens: [] }
    }
    atLineStart = false
    if (c === '\n') {
      line++
      i++
      atLineStart = true
      continue
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++
      continue
    }
    if (c === ';') {
      while (i < text.length && text[i] !== '\n') i++
      continue
    }
    if (c === '(') {
      if (depth === 0) parenLine = line
      depth++
      i++
      continue
    }
    if (c === ')') {
      if (depth === 0) throw new ZoneProblem(line, 'unbalanced ")"')
      depth--
      i++
      continue
    }
    const read = c === '"' ? readQuoted(text, i, line) : readWord(text, i)
    current().tokens.push(read.token)
    i = read.end
  }
  if (depth > 0) throw new ZoneProblem(parenLine, 'unbalanced "(" (no closing parenthesis)')
  finish()
  return entries
}

/** The quoted string starting at `start` (on `line`), as one token, and the index after its closing quote. */
function readQuoted(text: string, start: number, line: number): { token: Token; end: number } {
  let i = start + 1
  while (i < text.length && text[i] !== '"') {
    if (text[i] === '\n') throw new ZoneProblem(line, 'unterminated quoted string')
    i += text[i] === '\\' && i + 1 < text.length ? 2 : 1
  }
  if (i >= text.length) throw new ZoneProblem(line, 'unterminated quoted string')
  i++
  const raw = text.slice(start, i)
  return { token: { text: splitQuotedStrings(raw) ?? raw.slice(1, -1), raw, quoted: true }, end: i }
}

/** The unquoted word starting at `start`, `\X` and `\DDD` escapes resolved, and the index after it. */
function readWord(text: string, start: number): { token: Token; end: number } {
  let i = start
  let out = ''
  // The text since the last escape, copied in one slice.
  let run = start
  // Only the zone-file delimiters end a word; any other character (Unicode spaces included) is part of it
  // and refused by the record rules, so every pass of the outer loop consumes at least one character.
  while (i < text.length && !WORD_END.has(text.charAt(i))) {
    if (text[i] === '\\' && i + 1 < text.length && text[i + 1] !== '\n') {
      const d = /^\d{3}/.exec(text.slice(i + 1, i + 4))
      out += text.slice(run, i) + (d ? String.fromCharCode(Number(d[0])) : text[i + 1])
      i += d ? 4 : 2
      run = i
      continue
    }
    i++
  }
  out += text.slice(run, i)
  return { token: { text: out, raw: text.slice(start, i), quoted: false }, end: i }
}

const TTL_UNITS: Record<string, number> = { w: 604800, d: 86400, h: 3600, m: 60, s: 1 }

/** A TTL in seconds from `3600` or BIND units (`1h30m`, `2D`); null when `s` is not a TTL. */
export function parseTtl(s: string): number | null {
  if (/^\d+$/.test(s)) return Number(s)
  if (!/^(\d+[wdhms])+$/i.test(s)) return null
  let total = 0
  for (const [, count, unit] of s.toLowerCase().matchAll(/(\d+)([wdhms])/g)) {
    const seconds = unit === undefined ? undefined : TTL_UNITS[unit]
    if (seconds === undefined) throw new Error(`TTL unit ${unit} has no length in seconds`)
    total += Number(count) * seconds
  }
  return total
}

const CLASSES = new Set(['IN', 'CH', 'HS', 'CS', 'ANY'])
/** Types a zone file may contain that the import skips (the zone's own SOA) or refuses with a clear text. */
const KNOWN_OTHER_TYPES = new Set([
  'SOA',
  'PTR',
  'SPF',
  'HINFO',
  'NAPTR',
  'LOC',
  'RP',
  'DNAME',
  'DNSKEY',
  'RRSIG',
  'NSEC',
  'NSEC3',
  'NSEC3PARAM',
  'HTTPS',
  'SVCB',
  'URI',
  'CERT',
  'OPENPGPKEY',
  'ALIAS',
  'ANAME',
])

/**
 * Parses BIND zone text for `zone` into normalised records. Handles `$ORIGIN`, `$TTL`, `@`, relative names,
 * a blank owner (= the previous owner), parentheses across lines, comments and quoted strings. The SOA and
 * apex NS records are ignored (they come from the domain). More than `maxRecords` records throw 400. Any bad line throws 400
 * `Invalid zone file: line N: …`. Exact duplicate records are dropped; a CNAME sharing its name is refused.
 */
export function parseZone(zone: string, text: string, opts: { maxRecords?: number } = {}): NormalisedRecord[] {
  const apex = normaliseZone(zone)
  const out: { r: NormalisedRecord; line: number }[] = []
  try {
    let origin = apex
    let defaultTtl: number | null = null
    let lastTtl: number | null = null
    let lastOwner: string | null = null
    // `$ORIGIN .` (as BIND's own zone dumps start) makes the origin the root: origin ''.
    const absolute = (name: string, line: number) => {
      if (name === '@') return origin ? `${origin}.` : '.'
      if (name === '') throw new ZoneProblem(line, 'empty name')
      if (name.endsWith('.')) return name
      return origin ? `${name}.${origin}.` : `${name}.`
    }
    for (const e of tokenize(text)) {
      const toks = e.tokens
      const [first, arg] = toks
      if (first === undefined) throw new Error(`zone file line ${e.line}: an entry without tokens`)
      if (!e.blankOwner && !first.quoted && first.text.startsWith('$')) {
        const directive = first.text.toUpperCase()
        if (directive === '$ORIGIN') {
          if (toks.length !== 2 || arg === undefined) throw new ZoneProblem(e.line, '$ORIGIN takes one name')
          const o = absolute(arg.text.toLowerCase(), e.line)
          origin = o === '.' ? '' : o.slice(0, -1)
          continue
        }
        if (directive === '$TTL') {
          const ttl = toks.length === 2 && arg !== undefined ? parseTtl(arg.text) : null
          if (ttl === null) throw new ZoneProblem(e.line, '$TTL takes one TTL')
          defaultTtl = ttl
          continue
        }
        throw new ZoneProblem(e.line, `the ${first.text} directive is not supported`)
      }
      let i = 0
      let owner: string
      if (e.blankOwner) {
        if (lastOwner === null) throw new ZoneProblem(e.line, 'the first record has no owner name')
        owner = lastOwner
      } else {
        if (first.quoted) throw new ZoneProblem(e.line, 'an owner name cannot be quoted')
        owner = absolute(first.text.toLowerCase(), e.line)
        i = 1
      }
      const read = readTtlAndClass(toks, i, e.line)
      const ttl = read.ttl
      i = read.next
      const typeTok = toks[i]
      if (!typeTok || typeTok.quoted) throw new ZoneProblem(e.line, 'missing record type')
      const type = typeTok.text.toUpperCase()
      const rdata = toks.slice(i + 1)
      lastOwner = owner
      if (ttl !== null) lastTtl = ttl
      const ownerFqdn = owner.slice(0, -1)
      if (type === 'SOA' || (type === 'NS' && ownerFqdn === apex)) continue
      if (!(RECORD_TYPES as readonly string[]).includes(type)) {
        throw new ZoneProblem(
          e.line,
          KNOWN_OTHER_TYPES.has(type) || /^TYPE\d+$/.test(type)
            ? `record type ${type} is not supported (use one of ${RECORD_TYPES.join(', ')})`
            : `"${typeTok.text}" is not a record type`,
        )
      }
      if (rdata.length === 0) throw new ZoneProblem(e.line, `${type} record without a value`)
      const value = presentationValue(type as RecordType, rdata, (h) =>
        h === '.' ? '.' : absolute(h.toLowerCase(), e.line),
      )
      try {
        const r = normaliseRecord(
          apex,
          { type, name: owner, value, ttl: ttl ?? defaultTtl ?? lastTtl ?? DEFAULT_TTL },
          { zoneFile: true },
        )
        out.push({ r, line: e.line })
      } catch (err) {
        if (err instanceof ApiError) throw new ZoneProblem(e.line, err.message.replace(/^Invalid DNS record /, ''))
        throw err
      }
      // Counted before duplicates are dropped: a zone that lists more records than the limit is refused early.
      if (opts.maxRecords !== undefined && out.length > opts.maxRecords) throw errors.tooManyDnsRecords(opts.maxRecords)
    }
    return checkSetWithLines(out)
  } catch (err) {
    if (err instanceof ZoneProblem) throw errors.invalidZoneFile(err.line, err.message)
    throw err
  }
}

/** The optional TTL and class (in either order) from token `start` on; `next` is the index of the type. */
function readTtlAndClass(toks: Token[], start: number, line: number): { ttl: number | null; next: number } {
  let i = start
  let ttl: number | null = null
  for (let k = 0; k < 2; k++) {
    const t = toks[i]
    if (t === undefined || t.quoted) break
    const asTtl: number | null = ttl === null ? parseTtl(t.text) : null
    if (asTtl !== null) {
      ttl = asTtl
      i++
    } else if (CLASSES.has(t.text.toUpperCase())) {
      const cls = t.text.toUpperCase()
      if (cls !== 'IN') throw new ZoneProblem(line, `class ${cls} is not supported (only IN)`)
      i++
    } else break
  }
  return { ttl, next: i }
}

/** The number of rdata tokens of the types whose last token is a hostname (made absolute when the count is right). */
const HOST_LAST: Partial<Record<RecordType, number>> = { CNAME: 1, NS: 1, MX: 2, SRV: 4 }

/** Joins the rdata tokens of one record into the value form `normaliseRecord` reads, hostnames made absolute. */
function presentationValue(type: RecordType, rdata: Token[], abs: (h: string) => string): string {
  const t = rdata.map((x) => x.text)
  if (type === 'TXT') return `"${escapeQuoted(t.join(''))}"`
  if (type === 'CAA')
    return t.length === 3 && t[2] !== undefined
      ? `${t[0]} ${t[1]} "${escapeQuoted(t[2])}"`
      : rdata.map((x) => x.raw).join(' ')
  const host = t.length === HOST_LAST[type] ? t.at(-1) : undefined
  return host === undefined ? t.join(' ') : [...t.slice(0, -1), abs(host)].join(' ')
}

function checkSetWithLines(rows: { r: NormalisedRecord; line: number }[]): NormalisedRecord[] {
  const seen = new Set<string>()
  // Per name: the line of its first record and of its CNAME, so each record is checked in constant time.
  const byName = new Map<string, { first: number; cname: number | null }>()
  const out: NormalisedRecord[] = []
  for (const { r, line } of rows) {
    const key = `${r.type}\u0000${r.name}\u0000${r.value}`
    if (seen.has(key)) continue
    seen.add(key)
    const at = byName.get(r.name)
    if (at && (at.cname !== null || r.type === 'CNAME')) {
      throw new ZoneProblem(
        line,
        `${r.type} ${r.name}: a CNAME must be the only record at its name (see line ${at.cname ?? at.first})`,
      )
    }
    byName.set(r.name, at ?? { first: line, cname: r.type === 'CNAME' ? line : null })
    out.push(r)
  }
  return out
}
