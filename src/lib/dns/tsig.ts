import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * TSIG (RFC 8945) on DNS messages in wire form, with HMAC-SHA256: signing and verifying requests, responses and
 * the chained messages of a zone transfer. Works on bytes only, so it never depends on how a DNS library decodes
 * the TSIG record (type 250); verification never throws, whatever the bytes.
 */

/** A shared TSIG key (algorithm hmac-sha256). */
export interface TsigKey {
  /** The key name: lower case, no trailing dot. */
  name: string
  secret: Buffer
}

/** The only algorithm offered and accepted. */
export const TSIG_ALGORITHM = 'hmac-sha256'
/** TSIG errors (RFC 8945 §3), as carried in the record's Error field. */
export const TSIG_ERROR = { NOERROR: 0, BADSIG: 16, BADKEY: 17, BADTIME: 18 } as const
/** The time difference a signature is accepted with (seconds), and that signatures are sent with. */
export const TSIG_FUDGE = 300

const TYPE_TSIG = 250
const CLASS_ANY = 255
const MAC_SIZE = 32
/** The shortest (truncated) MAC accepted: half the HMAC-SHA256 output (RFC 8945 §5.2.2.1). */
const MIN_MAC_SIZE = 16

/** The fields of a TSIG record. */
export interface TsigRecord {
  keyName: string
  algorithm: string
  /** Seconds since the epoch. */
  timeSigned: number
  fudge: number
  mac: Buffer
  originalId: number
  error: number
  otherData: Buffer
}

/** What `verifyTsig` found. */
export type TsigCheck =
  /** No TSIG record. */
  | { status: 'unsigned' }
  /** The message or its TSIG record cannot be read (FORMERR). */
  | { status: 'malformed' }
  /** Signed with the key: `mac` is what a response is signed over. */
  | { status: 'ok'; record: TsigRecord; mac: Buffer }
  /**
   * Signed, but not acceptably: BADKEY (unknown key or algorithm) and BADSIG are answered unsigned, BADTIME signed
   * over `mac` (RFC 8945 §5.3.2).
   */
  | { status: 'error'; error: 'BADKEY' | 'BADSIG' | 'BADTIME'; record: TsigRecord; mac: Buffer }

/** How a message is signed or verified besides the key. */
export interface TsigOptions {
  /** The current time, seconds since the epoch. */
  now: number
  /** For a response: the MAC of the request it answers (empty when the request's TSIG was in error). */
  requestMac?: Buffer
  /**
   * For the second and later messages of a transfer (RFC 8945 §5.3.1): the MAC of the previous message, and only
   * the timers are signed.
   */
  priorMac?: Buffer
}

/** The TSIG fields set by the signer; the rest come from the key and the clock. */
export interface TsigSignOptions extends TsigOptions {
  error?: number
  otherData?: Buffer
  /** The time to sign with (default `now`): a BADTIME answer carries the request's. */
  timeSigned?: number
  /** Adds the record with an empty MAC (BADKEY and BADSIG answers). */
  unsigned?: boolean
}

/** The uncompressed wire form of a domain name in canonical (lower) case. */
export function nameToWire(name: string): Buffer {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.').filter(Boolean)
  const parts: Buffer[] = []
  for (const label of labels) {
    const bytes = Buffer.from(label, 'utf8')
    if (bytes.length > 63) throw new Error(`label too long in ${name}`)
    parts.push(Buffer.from([bytes.length]), bytes)
  }
  parts.push(Buffer.from([0]))
  return Buffer.concat(parts)
}

/** Reads a possibly compressed name at `off`: the name and where the record continues, or null when malformed. */
function readName(buf: Buffer, off: number): { name: string; end: number } | null {
  const labels: string[] = []
  let end = -1
  let jumps = 0
  let p = off
  for (;;) {
    const len = buf[p]
    if (len === undefined) return null
    if ((len & 0xc0) === 0xc0) {
      const low = buf[p + 1]
      if (low === undefined || ++jumps > 64) return null
      if (end < 0) end = p + 2
      p = ((len & 0x3f) << 8) | low
      continue
    }
    if (len & 0xc0) return null
    if (len === 0) return { name: labels.join('.').toLowerCase(), end: end < 0 ? p + 1 : end }
    if (p + 1 + len > buf.length) return null
    labels.push(buf.toString('latin1', p + 1, p + 1 + len))
    p += 1 + len
  }
}

/** The offset just past the name at `off` (without following pointers), or -1. */
function skipName(buf: Buffer, off: number): number {
  for (let p = off; ; ) {
    const len = buf[p]
    if (len === undefined) return -1
    if ((len & 0xc0) === 0xc0) return p + 2 <= buf.length ? p + 2 : -1
    if (len & 0xc0) return -1
    if (len === 0) return p + 1
    p += 1 + len
  }
}

/**
 * Finds the TSIG record of a message: `offset` where it starts (it must be the last record), or null when there
 * is none; 'malformed' when the message cannot be walked, holds TSIG elsewhere, or the record is unreadable.
 */
export function findTsig(msg: Buffer): { offset: number; record: TsigRecord } | null | 'malformed' {
  if (msg.length < 12) return 'malformed'
  const qd = msg.readUInt16BE(4)
  const rrs = msg.readUInt16BE(6) + msg.readUInt16BE(8) + msg.readUInt16BE(10)
  let p = 12
  for (let i = 0; i < qd; i++) {
    p = skipName(msg, p)
    if (p < 0 || p + 4 > msg.length) return 'malformed'
    p += 4
  }
  let found: number | null = null
  for (let i = 0; i < rrs; i++) {
    const start = p
    p = skipName(msg, p)
    if (p < 0 || p + 10 > msg.length) return 'malformed'
    const type = msg.readUInt16BE(p)
    const rdlength = msg.readUInt16BE(p + 8)
    p += 10 + rdlength
    if (p > msg.length) return 'malformed'
    if (type === TYPE_TSIG) {
      if (i !== rrs - 1 || i < msg.readUInt16BE(6) + msg.readUInt16BE(8)) return 'malformed'
      found = start
    }
  }
  if (found === null) return null
  const record = readTsigRecord(msg, found)
  return record ? { offset: found, record } : 'malformed'
}

function readTsigRecord(msg: Buffer, offset: number): TsigRecord | null {
  const owner = readName(msg, offset)
  if (!owner) return null
  // Class ANY and TTL 0 are fixed (RFC 8945 §4.2); the MAC covers them as such.
  if (msg.readUInt16BE(owner.end + 2) !== CLASS_ANY || msg.readUInt32BE(owner.end + 4) !== 0) return null
  let p = owner.end + 8
  const rdlength = msg.readUInt16BE(p)
  p += 2
  const rdEnd = p + rdlength
  const alg = readName(msg, p)
  if (!alg || alg.end + 10 > rdEnd) return null
  p = alg.end
  const timeSigned = msg.readUIntBE(p, 6)
  const fudge = msg.readUInt16BE(p + 6)
  const macSize = msg.readUInt16BE(p + 8)
  p += 10
  if (p + macSize + 6 > rdEnd) return null
  const mac = Buffer.from(msg.subarray(p, p + macSize))
  p += macSize
  const originalId = msg.readUInt16BE(p)
  const error = msg.readUInt16BE(p + 2)
  const otherLen = msg.readUInt16BE(p + 4)
  p += 6
  if (p + otherLen !== rdEnd) return null
  const otherData = Buffer.from(msg.subarray(p, p + otherLen))
  return { keyName: owner.name, algorithm: alg.name, timeSigned, fudge, mac, originalId, error, otherData }
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2)
  b.writeUInt16BE(n)
  return b
}
const u48 = (n: number) => {
  const b = Buffer.alloc(6)
  b.writeUIntBE(n, 0, 6)
  return b
}
const withLength = (mac: Buffer) => Buffer.concat([u16(mac.length), mac])

/** The MAC over `unsigned` (the message without its TSIG, ARCOUNT and ID as signed) and the TSIG variables. */
function computeMac(
  key: TsigKey,
  unsigned: Buffer,
  r: Omit<TsigRecord, 'mac' | 'originalId'>,
  opts: TsigOptions,
): Buffer {
  const hmac = createHmac('sha256', key.secret)
  if (opts.priorMac) {
    hmac.update(withLength(opts.priorMac))
    hmac.update(unsigned)
    hmac.update(Buffer.concat([u48(r.timeSigned), u16(r.fudge)]))
    return hmac.digest()
  }
  if (opts.requestMac) hmac.update(withLength(opts.requestMac))
  hmac.update(unsigned)
  hmac.update(
    Buffer.concat([
      nameToWire(r.keyName),
      u16(CLASS_ANY),
      Buffer.alloc(4),
      nameToWire(r.algorithm),
      u48(r.timeSigned),
      u16(r.fudge),
      u16(r.error),
      u16(r.otherData.length),
      r.otherData,
    ]),
  )
  return hmac.digest()
}

function tsigRecordWire(key: TsigKey, r: TsigRecord): Buffer {
  const rdata = Buffer.concat([
    nameToWire(r.algorithm),
    u48(r.timeSigned),
    u16(r.fudge),
    withLength(r.mac),
    u16(r.originalId),
    u16(r.error),
    u16(r.otherData.length),
    r.otherData,
  ])
  return Buffer.concat([
    nameToWire(key.name),
    u16(TYPE_TSIG),
    u16(CLASS_ANY),
    Buffer.alloc(4),
    u16(rdata.length),
    rdata,
  ])
}

/** How many bytes signing adds to a message (with a full MAC and no other data). */
export function tsigLength(key: TsigKey): number {
  return nameToWire(key.name).length + 10 + nameToWire(TSIG_ALGORITHM).length + 10 + MAC_SIZE + 6
}

/** Signs a message without a TSIG record: the message with the record added, and its MAC. */
export function signTsig(msg: Buffer, key: TsigKey, opts: TsigSignOptions): { message: Buffer; mac: Buffer } {
  const fields = {
    keyName: key.name,
    algorithm: TSIG_ALGORITHM,
    timeSigned: opts.timeSigned ?? opts.now,
    fudge: TSIG_FUDGE,
    error: opts.error ?? 0,
    otherData: opts.otherData ?? Buffer.alloc(0),
  }
  const mac = opts.unsigned ? Buffer.alloc(0) : computeMac(key, msg, fields, opts)
  const record: TsigRecord = { ...fields, mac, originalId: msg.readUInt16BE(0) }
  const out = Buffer.concat([msg, tsigRecordWire(key, record)])
  out.writeUInt16BE(msg.readUInt16BE(10) + 1, 10)
  return { message: out, mac }
}

/**
 * Verifies the TSIG of a message with `key` (RFC 8945 §5.2: key and algorithm, then MAC, then time). Never throws.
 * Without a key, a signed message is BADKEY.
 */
export function verifyTsig(msg: Buffer, key: TsigKey | null, opts: TsigOptions): TsigCheck {
  let found: ReturnType<typeof findTsig>
  try {
    found = findTsig(msg)
  } catch {
    return { status: 'malformed' }
  }
  if (found === 'malformed') return { status: 'malformed' }
  if (found === null) return { status: 'unsigned' }
  const { offset, record } = found
  if (!key || record.keyName !== key.name.toLowerCase() || record.algorithm !== TSIG_ALGORITHM) {
    return { status: 'error', error: 'BADKEY', record, mac: Buffer.alloc(0) }
  }
  if (record.mac.length > MAC_SIZE || record.mac.length < MIN_MAC_SIZE) return { status: 'malformed' }
  const unsigned = Buffer.from(msg.subarray(0, offset))
  unsigned.writeUInt16BE(record.originalId, 0)
  unsigned.writeUInt16BE(msg.readUInt16BE(10) - 1, 10)
  const expected = computeMac(key, unsigned, record, opts).subarray(0, record.mac.length)
  if (!timingSafeEqual(expected, record.mac)) return { status: 'error', error: 'BADSIG', record, mac: Buffer.alloc(0) }
  if (Math.abs(opts.now - record.timeSigned) > record.fudge) {
    return { status: 'error', error: 'BADTIME', record, mac: record.mac }
  }
  return { status: 'ok', record, mac: record.mac }
}

/** The Other Data of a BADTIME answer: the server's time (48 bits). */
export function badTimeOtherData(now: number): Buffer {
  return u48(now)
}

/** Parses `name:base64secret`; null when it is not of that form. */
export function parseTsigKey(spec: string): TsigKey | null {
  const i = spec.indexOf(':')
  if (i <= 0) return null
  const name = spec.slice(0, i).trim().toLowerCase().replace(/\.$/, '')
  const b64 = spec.slice(i + 1).trim()
  if (
    !/^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(name)
  ) {
    return null
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return null
  const secret = Buffer.from(b64, 'base64')
  return secret.length ? { name, secret } : null
}
