import ipaddr from 'ipaddr.js'
import { errors } from '../../../errors.js'
import { parseHostname } from '../../../lib/domain-name.js'

/** One nameserver as the API shows it; `ipv4`/`ipv6` are glue addresses, empty when not needed. */
export interface Nameserver {
  hostname: string
  ipv4: string
  ipv6: string
}

/** What clients send for a nameserver: a hostname, or an object with optional glue. */
export type NameserverInput = string | { hostname: string; ipv4?: string | null; ipv6?: string | null }

/** The fewest nameservers a domain or profile may have. */
export const MIN_NAMESERVERS = 2
/** The most nameservers a domain or profile may have. */
export const MAX_NAMESERVERS = 13

/** Validates a nameserver list (2–13 hostnames, optional glue addresses, no duplicates) into its stored form. */
export function normaliseNameservers(input: NameserverInput[]): Nameserver[] {
  if (input.length < MIN_NAMESERVERS || input.length > MAX_NAMESERVERS) throw errors.nameserverCount()
  const out: Nameserver[] = []
  for (const item of input) {
    const raw = typeof item === 'string' ? { hostname: item } : item
    const hostname = parseHostname(String(raw.hostname ?? ''))
    if (!hostname) throw errors.invalidNameserver(String(raw.hostname ?? ''))
    const ipv4 = (raw.ipv4 ?? '').trim()
    const ipv6 = (raw.ipv6 ?? '').trim()
    if (ipv4 && !ipaddr.IPv4.isValidFourPartDecimal(ipv4)) throw errors.invalidNameserverIpv4(hostname, ipv4)
    if (ipv6 && !ipaddr.IPv6.isValid(ipv6)) throw errors.invalidNameserverIpv6(hostname, ipv6)
    if (out.some((n) => n.hostname === hostname)) continue
    out.push({ hostname, ipv4, ipv6: ipv6 ? ipaddr.IPv6.parse(ipv6).toRFC5952String() : '' })
  }
  if (out.length < MIN_NAMESERVERS) throw errors.nameserverCount()
  return out
}

/** 1 when `nameservers` include one of the provider's own, so the zone kept here is the one the world sees; else 0. */
export function managedDns(nameservers: Nameserver[], provider: Nameserver[]): number {
  const ours = new Set(provider.map((n) => n.hostname))
  return nameservers.some((n) => ours.has(n.hostname)) ? 1 : 0
}
