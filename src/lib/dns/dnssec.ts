import { createHash, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import dnsPacket from 'dns-packet'

/**
 * DNSSEC (RFC 4033–4035) in wire form: the canonical form of names and RRsets (RFC 4034 §6), the RRSIG signing
 * input (§3.1.8.1), key tags (Appendix B), DS digests (§5.1.4), ECDSA P-256/SHA-256 keys (algorithm 13, RFC 6605)
 * and the checks a public key given for another algorithm must pass. Names are in presentation form without the
 * trailing dot, as `dns-packet` reads and writes them.
 */

/** ECDSA Curve P-256 with SHA-256, the only algorithm hostapi signs with. */
export const ALG_ECDSAP256SHA256 = 13
/** DNSKEY flags of a key signing key (Zone Key + Secure Entry Point): the combined key hostapi publishes. */
export const FLAGS_KSK = 257
/** The DNSKEY protocol field, always 3. */
export const DNSKEY_PROTOCOL = 3
/** The DS digest type hostapi computes (SHA-256). */
export const DIGEST_SHA256 = 2

/** A DNSKEY's RDATA fields; `publicKey` is the key in its algorithm's wire form. */
export interface DnskeyData {
  flags: number
  algorithm: number
  publicKey: Buffer
}

/** A DNSKEY with what the parent zone needs: its tag and its SHA-256 DS digest. */
export interface DelegationKey extends DnskeyData {
  keyTag: number
  /** The SHA-256 digest of the owner name and the DNSKEY RDATA (a DS record's digest, digest type 2). */
  digest: Buffer
}

/** The parts of `dns-packet` its type declarations leave out: the name and RDATA codecs. */
const codec = dnsPacket as unknown as {
  name: { encode(name: string): Buffer }
  record(type: string): { encode(data: unknown): Buffer }
  rrsig: { encode(data: unknown): Buffer }
}

const UPPER = /[A-Z]/g
/** Lower-cases US-ASCII letters only, as the canonical form does (other bytes are left alone). */
export const asciiLower = (s: string): string => s.replace(UPPER, (c) => c.toLowerCase())

/** A name in canonical wire form: uncompressed, ASCII letters lower case. */
export function nameWire(name: string): Buffer {
  return codec.name.encode(asciiLower(name))
}

/** The labels of a name (none for the root), leftmost first. */
const labelsOf = (name: string): string[] => (name === '' || name === '.' ? [] : name.replace(/\.$/, '').split('.'))

/** The RRSIG Labels field of an owner name: its labels, not counting the root nor a leading `*` (RFC 4034 §3.1.3). */
export function rrsigLabels(owner: string): number {
  const labels = labelsOf(owner)
  return labels[0] === '*' ? labels.length - 1 : labels.length
}

/** Compares two names in canonical order (RFC 4034 §6.1): label by label from the right, as lower-case octets. */
export function compareNames(a: string, b: string): number {
  const x = labelsOf(asciiLower(a)).reverse()
  const y = labelsOf(asciiLower(b)).reverse()
  // Label by label until one name runs out of labels; then the shorter one sorts first.
  for (let i = 0; ; i++) {
    const p = x[i]
    const q = y[i]
    if (p === undefined || q === undefined) return x.length - y.length
    const c = Buffer.compare(Buffer.from(p, 'utf8'), Buffer.from(q, 'utf8'))
    if (c !== 0) return c
  }
}

// The types whose RDATA names are lower-cased in the canonical form (RFC 4034 §6.2, as amended by RFC 6840 §5.1).
const NAME_FIELDS: Record<string, string[] | null> = {
  NS: null,
  CNAME: null,
  PTR: null,
  DNAME: null,
  MX: ['exchange'],
  SRV: ['target'],
  SOA: ['mname', 'rname'],
}

/** The RDATA of one record (`dns-packet` data) in canonical form, without its length. */
export function canonicalRdata(type: string, data: unknown): Buffer {
  let d = data
  if (type in NAME_FIELDS) {
    const fields = NAME_FIELDS[type]
    if (fields === null) d = asciiLower(String(data))
    else {
      const copy = { ...(data as Record<string, unknown>) }
      for (const f of fields) copy[f] = asciiLower(String(copy[f]))
      d = copy
    }
  }
  return codec.record(type).encode(d).subarray(2)
}

/** A DNSKEY's RDATA: flags, protocol 3, algorithm, public key. */
export function dnskeyRdata(key: DnskeyData): Buffer {
  const head = Buffer.alloc(4)
  head.writeUInt16BE(key.flags, 0)
  head.writeUInt8(DNSKEY_PROTOCOL, 2)
  head.writeUInt8(key.algorithm, 3)
  return Buffer.concat([head, key.publicKey])
}

/** The key tag of a DNSKEY RDATA (RFC 4034 Appendix B). */
export function keyTag(rdata: Buffer): number {
  let ac = 0
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata.readUInt8(i) : rdata.readUInt8(i) << 8
  ac += (ac >> 16) & 0xffff
  return ac & 0xffff
}

/** The DNSKEY at `zone` with its key tag and SHA-256 DS digest, as the parent zone publishes it. */
export function delegationKey(zone: string, key: DnskeyData): DelegationKey {
  const rdata = dnskeyRdata(key)
  const digest = createHash('sha256')
    .update(Buffer.concat([nameWire(zone), rdata]))
    .digest()
  return { ...key, keyTag: keyTag(rdata), digest }
}

/** The fields of an RRSIG before it is signed. */
export interface RrsigFields {
  typeCovered: string
  algorithm: number
  /** The RRSIG Labels field (see `rrsigLabels`). */
  labels: number
  originalTTL: number
  /** Seconds since the epoch (serial number arithmetic aside, valid until 2106). */
  expiration: number
  inception: number
  keyTag: number
  /** The zone apex. */
  signersName: string
}

/**
 * The data an RRSIG signs (RFC 4034 §3.1.8.1): its RDATA without the signature, then every record of the RRset in
 * canonical form and order, each with `owner` (for a wildcard answer, the wildcard: `*.` and the rightmost
 * `labels` labels), the class IN and the original TTL.
 */
export function rrsigSigningInput(fields: RrsigFields, owner: string, rdatas: Buffer[]): Buffer {
  const head = codec.rrsig
    .encode({ ...fields, signersName: asciiLower(fields.signersName), signature: Buffer.alloc(0) })
    .subarray(2)
  const ownerWire = nameWire(owner)
  const sorted = [...new Map(rdatas.map((r) => [r.toString('hex'), r])).values()].sort(Buffer.compare)
  const parts: Buffer[] = [head]
  for (const rdata of sorted) {
    const fixed = Buffer.alloc(10)
    // The type covered, as the RRSIG RDATA above carries it.
    fixed.writeUInt16BE(head.readUInt16BE(0), 0)
    fixed.writeUInt16BE(1, 2)
    fixed.writeUInt32BE(fields.originalTTL, 4)
    fixed.writeUInt16BE(rdata.length, 8)
    parts.push(ownerWire, fixed, rdata)
  }
  return Buffer.concat(parts)
}

/** A new zone key: ECDSA P-256, its private key as PKCS#8 PEM and its public key in DNSKEY form (64 bytes). */
export function generateZoneKey(): { privateKeyPem: string; publicKey: Buffer } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: p256Point(privateKey),
  }
}

/** The DNSKEY public key (x‖y, 64 bytes) of a P-256 key, private or public. */
export function p256Point(key: KeyObject): Buffer {
  const { x, y } = key.export({ format: 'jwk' })
  if (x === undefined || y === undefined) throw new Error('not an elliptic-curve key: its JWK has no point x, y')
  return Buffer.concat([Buffer.from(x, 'base64url'), Buffer.from(y, 'base64url')])
}

/** Signs `data` with a P-256 private key: the 64-byte r‖s signature DNSSEC carries (RFC 6605 §4). */
export function signP256(privateKey: KeyObject, data: Buffer): Buffer {
  return sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' })
}

/** A P-256 private key as BIND's private-key file has it (the form PowerDNS imports: `Private-key-format`). */
export function iscPrivateKey(privateKey: KeyObject): string {
  const { d } = privateKey.export({ format: 'jwk' })
  if (d === undefined) throw new Error('not a private key: its JWK has no d')
  const secret = Buffer.from(d, 'base64url').toString('base64')
  return `Private-key-format: v1.2\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: ${secret}\n`
}

/** Base64 of the standard alphabet with padding, whitespace removed; null when `text` is not that. */
export function decodeBase64(text: string): Buffer | null {
  const s = text.replace(/\s+/g, '')
  if (s === '' || s.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return null
  return Buffer.from(s, 'base64')
}

const ecPoint = (crv: string, size: number, key: Buffer): boolean => {
  if (key.length !== size * 2) return false
  try {
    const x = key.subarray(0, size).toString('base64url')
    const y = key.subarray(size).toString('base64url')
    createPublicKey({ key: { kty: 'EC', crv, x, y }, format: 'jwk' })
    return true
  } catch {
    return false
  }
}

const okpKey = (crv: string, size: number, key: Buffer): boolean => {
  if (key.length !== size) return false
  try {
    createPublicKey({ key: { kty: 'OKP', crv, x: key.toString('base64url') }, format: 'jwk' })
    return true
  } catch {
    return false
  }
}

/** An RSA public key in RFC 3110 form (exponent length, exponent, modulus) of `minBits` to 4096 bits. */
const rsaKey = (minBits: number, key: Buffer): boolean => {
  if (key.length < 3) return false
  const long = key[0] === 0
  const expLen = long ? key.readUInt16BE(1) : key.readUInt8(0)
  const start = long ? 3 : 1
  const exponent = key.subarray(start, start + expLen)
  const modulus = key.subarray(start + expLen)
  const top = modulus[0]
  if (expLen === 0 || exponent.length !== expLen || exponent[0] === 0 || top === 0 || top === undefined) return false
  const bits = modulus.length * 8 - Math.clz32(top) + 24
  if (bits < minBits || bits > 4096) return false
  try {
    createPublicKey({
      key: { kty: 'RSA', n: modulus.toString('base64url'), e: exponent.toString('base64url') },
      format: 'jwk',
    })
    return true
  } catch {
    return false
  }
}

/**
 * A DSA public key in RFC 2536 form: T (0 to 8), Q (20 bytes), then P, G and Y of 64 + 8·T bytes each, P of exactly
 * 512 + 64·T bits. Node builds no DSA key from its parts, so the form is what is checked.
 */
const dsaKey = (key: Buffer): boolean => {
  const t = key[0]
  if (t === undefined || t > 8) return false
  const size = 64 + 8 * t
  return key.length === 1 + 20 + 3 * size && key.readUInt8(1) >= 0x80 && key.readUInt8(21) >= 0x80
}

/** A GOST R 34.10-2001 public key in RFC 5933 form: x and y, 32 bytes each, not both zero. */
const gostKey = (key: Buffer): boolean => key.length === 64 && key.some((b) => b !== 0)

/** What a DNSKEY public key of each accepted algorithm must be, as an error text says it. */
export const PUBLIC_KEY_FORMS: Record<number, { describe: string; valid: (key: Buffer) => boolean }> = {
  5: { describe: 'an RSA key in RFC 3110 form (512 to 4096 bits)', valid: (k) => rsaKey(512, k) },
  6: { describe: 'a DSA key in RFC 2536 form (T, Q, P, G, Y)', valid: dsaKey },
  7: { describe: 'an RSA key in RFC 3110 form (512 to 4096 bits)', valid: (k) => rsaKey(512, k) },
  8: { describe: 'an RSA key in RFC 3110 form (512 to 4096 bits)', valid: (k) => rsaKey(512, k) },
  10: { describe: 'an RSA key in RFC 3110 form (1024 to 4096 bits)', valid: (k) => rsaKey(1024, k) },
  12: { describe: 'a GOST R 34.10-2001 key of 64 bytes', valid: gostKey },
  13: { describe: 'a P-256 point of 64 bytes', valid: (k) => ecPoint('P-256', 32, k) },
  14: { describe: 'a P-384 point of 96 bytes', valid: (k) => ecPoint('P-384', 48, k) },
  15: { describe: 'an Ed25519 key of 32 bytes', valid: (k) => okpKey('Ed25519', 32, k) },
  16: { describe: 'an Ed448 key of 57 bytes', valid: (k) => okpKey('Ed448', 57, k) },
}

const LDH_MAX = 0x7e
const MAX_LABEL = 63

/**
 * A minimally covering NSEC for a name that does not exist (RFC 4470 "white lies"), given the label `label` of its
 * next closer name directly below its closest encloser `encloser`: the NSEC runs from just before that name to
 * just after it and its descendants, so it covers the name and nothing that may exist, and its owner and next name
 * have the closest encloser as longest common ancestor (the closest encloser proof validators derive from it).
 * Null for labels this cannot be done for (ending in a byte outside printable ASCII).
 */
export function coveringNsec(label: string, encloser: string): { owner: string; next: string } | null {
  const last = label.charCodeAt(label.length - 1)
  if (!label || Number.isNaN(last) || last <= 0x21 || last > LDH_MAX) return null
  let before = last - 1
  // A letter would sort as its lower case, after the label it must precede.
  if (before >= 0x41 && before <= 0x5a) before = 0x40
  // `~` sorts after every letter, digit, `-`, `_` and `*`: only names with a `~` or a byte above lie in between.
  const prev = `${label.slice(0, -1)}${String.fromCharCode(before)}${label.length < MAX_LABEL ? '~' : ''}`
  let next: string
  if (label.length < MAX_LABEL) next = `${label}\u0000`
  else {
    let after = last + 1
    if (after >= 0x41 && after <= 0x5a) after = 0x5b
    next = `${label.slice(0, -1)}${String.fromCharCode(after)}`
  }
  const under = (l: string) => (encloser ? `${l}.${encloser}` : l)
  return { owner: under(prev), next: under(next) }
}

/** The next name of the NSEC at an existing name: its first possible descendant, `\000.name` (RFC 4470 §3). */
export function nsecSuccessor(name: string): string {
  return `\u0000.${name}`
}
