import { createHash, randomBytes } from 'node:crypto'
import ipaddr from 'ipaddr.js'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
export const KEY_PREFIX_LENGTH = 8

/** A new random API key: 40 characters of base62 (about 238 bits). */
export function generateApiKey(): string {
  const bytes = randomBytes(40)
  let out = ''
  for (const b of bytes) out += ALPHABET[b % 62]
  return out
}

/** The stored form of a key. Keys carry enough entropy that a fast hash is safe and one indexed lookup finds them. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex')

/** The short part of a key that may be shown and logged. */
export const keyPrefix = (key: string): string => key.slice(0, KEY_PREFIX_LENGTH)

/**
 * An address as people write it: IPv4 in four decimal parts (`010.0.0.1` or `127.1` would be read as octal
 * or short forms, so they are refused), IPv6 without a zone (`%eth0`). IPv4-mapped IPv6 is kept as written.
 */
function parseWritten(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text)
  if (text.includes(':') && !text.includes('%') && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text)
  return null
}

/**
 * Parses an address or CIDR range; returns the normalised text (which normalises to itself) or null.
 * An IPv4-mapped address or range becomes its IPv4 form (`::ffff:192.0.2.0/120` → `192.0.2.0/24`); a mapped
 * range wider than the mapped block stays IPv6.
 */
export function normaliseIpEntry(entry: string): string | null {
  const s = entry.trim()
  const slash = s.indexOf('/')
  const addr = parseWritten(slash < 0 ? s : s.slice(0, slash))
  if (!addr) return null
  if (slash < 0) return unmap(addr).toString()
  const bitsText = s.slice(slash + 1)
  if (!/^(0|[1-9][0-9]{0,2})$/.test(bitsText)) return null
  const bits = Number(bitsText)
  if (bits > (addr.kind() === 'ipv4' ? 32 : 128)) return null
  const mapped = addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()
  if (mapped && bits >= 96) return `${unmap(addr).toString()}/${bits - 96}`
  return `${addr.toString()}/${bits}`
}

/** True when `ip` is one of the addresses or inside one of the CIDR ranges of `list`. */
export function ipAllowed(ip: string, list: readonly string[]): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6
  try {
    addr = unmap(ipaddr.parse(ip))
  } catch {
    return false
  }
  // An IPv6 range wide enough to hold IPv4-mapped addresses holds the IPv4 callers in it too.
  const v6 = addr.kind() === 'ipv4' ? (addr as ipaddr.IPv4).toIPv4MappedAddress() : (addr as ipaddr.IPv6)
  for (const entry of list) {
    // Entries are normalised when they are stored; one that does not read never matches.
    const n = normaliseIpEntry(entry)
    if (n === null) continue
    if (n.includes('/')) {
      const [range, bits] = ipaddr.parseCIDR(n)
      if (
        range.kind() === 'ipv6'
          ? v6.match(range as ipaddr.IPv6, bits)
          : addr.kind() === 'ipv4' && (addr as ipaddr.IPv4).match(range as ipaddr.IPv4, bits)
      )
        return true
    } else {
      const one = ipaddr.parse(n)
      if (one.kind() === addr.kind() && one.toNormalizedString() === addr.toNormalizedString()) return true
    }
  }
  return false
}

function unmap(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()
    ? (addr as ipaddr.IPv6).toIPv4Address()
    : addr
}
