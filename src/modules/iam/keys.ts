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

/** Parses an address or CIDR range; returns the normalised text or null. */
export function normaliseIpEntry(entry: string): string | null {
  const s = entry.trim()
  try {
    if (s.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(s)
      return `${unmap(addr).toString()}/${addr.kind() === 'ipv6' && unmap(addr).kind() === 'ipv4' ? bits - 96 : bits}`
    }
    return unmap(ipaddr.parse(s)).toString()
  } catch {
    return null
  }
}

/** True when `ip` is one of the addresses or inside one of the CIDR ranges of `list`. */
export function ipAllowed(ip: string, list: readonly string[]): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6
  try {
    addr = unmap(ipaddr.parse(ip))
  } catch {
    return false
  }
  for (const entry of list) {
    try {
      if (entry.includes('/')) {
        const [range, bits] = ipaddr.parseCIDR(entry)
        if (range.kind() === addr.kind() && addr.match([range, bits] as never)) return true
      } else {
        const one = unmap(ipaddr.parse(entry))
        if (one.kind() === addr.kind() && one.toNormalizedString() === addr.toNormalizedString()) return true
      }
    } catch {
      // A malformed entry never matches; entries are validated when they are stored.
    }
  }
  return false
}

function unmap(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr
}
