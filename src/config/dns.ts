import ipaddr from 'ipaddr.js'
import { parseTsigKey } from '../lib/dns/tsig.js'
import type { EnvReader } from './env-reader.js'

// The DNS sections of the configuration: the built-in server, its secondaries, and the driver.

/** Response-rate limiting of the built-in DNS server's UDP answers (HOSTAPI_DNS_RRL_*). */
export interface DnsRrlConfig {
  /** Answers per second a client prefix (/24, /56) gets for one answer (its burst too); 0 switches the limiting off. */
  responsesPerSecond: number
  /** Every `slip`-th limited answer is sent truncated (TC=1, no records), so a real client retries over TCP; 0: none. */
  slip: number
  /** How long a flood is remembered (s): a prefix that kept asking is limited for up to this long after it stops. */
  windowSeconds: number
}

/** The built-in DNS server's address (port 0 turns it off) and its response-rate limiting. */
/** The built-in authoritative DNS server: UDP and TCP on `host`:`port`; port null = off. */
export interface DnsServerConfig {
  host: string
  port: number | null
  rrl: DnsRrlConfig
}

export function dnsConfig(r: EnvReader): DnsServerConfig {
  const host = r.env.HOSTAPI_DNS_HOST || '127.0.0.1'
  if (!ipaddr.isValid(host)) r.problem(`HOSTAPI_DNS_HOST must be an IP address (got "${host}")`)
  // Not 5353: that is the mDNS port, held by avahi or mDNSResponder on most desktops.
  const port = r.int('HOSTAPI_DNS_PORT', 8053, 0, 65535)
  const rrl: DnsRrlConfig = {
    responsesPerSecond: r.int('HOSTAPI_DNS_RRL_RESPONSES_PER_SECOND', 10, 0, 1_000_000),
    slip: r.int('HOSTAPI_DNS_RRL_SLIP', 2, 0, 10),
    windowSeconds: r.int('HOSTAPI_DNS_RRL_WINDOW', 15, 1, 3600),
  }
  return { host, port: port === 0 ? null : port, rrl }
}

/** The DNS driver's settings (HOSTAPI_DNS_DRIVER and, for PowerDNS, HOSTAPI_POWERDNS_*). */
export type DnsDriverConfig =
  | { driver: 'builtin' }
  | {
      driver: 'powerdns'
      url: string
      apiKey: string
      serverId: string
      /** PowerDNS's `webserver-max-bodysize` in bytes: pushes are split to stay under it. */
      maxBodyBytes: number
      /** Zones pushed at once. */
      concurrency: number
      /** How often an unreachable PowerDNS is asked whether it is back (ms), so queued pushes go out at once. */
      probeMs: number
      /** Where PowerDNS answers DNS queries: ACME challenges are checked there before the CA is asked. */
      dnsAddress: { host: string; port: number } | null
    }

/** The DNS driver: the built-in server, or PowerDNS through its HTTP API. */
export function dnsDriverConfig(r: EnvReader): DnsDriverConfig {
  const env = r.env
  const driver = env.HOSTAPI_DNS_DRIVER || 'builtin'
  if (driver === 'builtin') return { driver }
  if (driver !== 'powerdns') {
    r.problem(`HOSTAPI_DNS_DRIVER must be builtin or powerdns (got "${driver}")`)
    return { driver: 'builtin' }
  }
  const url = env.HOSTAPI_POWERDNS_URL || ''
  const apiKey = env.HOSTAPI_POWERDNS_API_KEY || ''
  if (!url) r.problem('HOSTAPI_POWERDNS_URL must be set when HOSTAPI_DNS_DRIVER is powerdns')
  else if (!/^https?:\/\/[^\s/]+(\/\S*)?$/.test(url))
    r.problem(`HOSTAPI_POWERDNS_URL must be an http(s) URL (got "${url}")`)
  if (!apiKey) r.problem('HOSTAPI_POWERDNS_API_KEY must be set when HOSTAPI_DNS_DRIVER is powerdns')
  return {
    driver,
    url,
    apiKey,
    serverId: env.HOSTAPI_POWERDNS_SERVER_ID || 'localhost',
    maxBodyBytes: r.int('HOSTAPI_POWERDNS_MAX_BODY_BYTES', 2 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
    concurrency: r.int('HOSTAPI_POWERDNS_CONCURRENCY', 4, 1, 256),
    probeMs: r.int('HOSTAPI_POWERDNS_PROBE_MS', 2000, 100, 600_000),
    dnsAddress: hostPort(r, 'HOSTAPI_POWERDNS_DNS_ADDRESS'),
  }
}

/** An `ip:port` or `[ipv6]:port` setting (port 53 when left out), or null when unset; a problem is recorded. */
function hostPort(r: EnvReader, name: string): { host: string; port: number } | null {
  const raw = r.env[name]
  if (!raw) return null
  const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(raw) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(raw)
  const host = m?.[1]
  const port = Number(m?.[2] ?? 53)
  if (host === undefined || !ipaddr.isValid(host) || port < 1 || port > 65535) {
    r.problem(`${name} must be ip:port or [ipv6]:port (got "${raw}")`)
    return null
  }
  return { host, port }
}

/** A secondary of the built-in DNS server: it may transfer zones, and is sent NOTIFY when it is one address. */
export interface DnsSecondary {
  /** The address, or the first address of the range, as given (IPv4 or IPv6). */
  address: string
  /** The CIDR prefix length: 32 or 128 for one address. */
  prefixLength: number
  /** The UDP port NOTIFY goes to; null for a range, which is never notified. */
  notifyPort: number | null
}

/** Zone transfers (AXFR, IXFR) and NOTIFY of the built-in DNS server; no secondaries: no transfers. */
export interface DnsTransferConfig {
  secondaries: DnsSecondary[]
  /** The TSIG key (hmac-sha256) every transfer must be signed with, and NOTIFY is signed with; null: none. */
  tsigKey: { name: string; secret: string } | null
  /** The catalog zone (RFC 9432) listing every served zone for the secondaries; null: none. */
  catalogZone: string | null
}

/** The catalog zone's name when none is set: under `.invalid` (RFC 6761), so it can never be a customer's zone. */
export const DEFAULT_CATALOG_ZONE = 'catalog.hostapi.invalid'

/**
 * Reads HOSTAPI_DNS_SECONDARIES, HOSTAPI_DNS_TSIG_KEY, HOSTAPI_DNS_NOTIFY_PORT and HOSTAPI_DNS_CATALOG_ZONE; every
 * problem is recorded.
 */
export function dnsTransferConfig(r: EnvReader): DnsTransferConfig {
  const env = r.env
  const rawPort = env.HOSTAPI_DNS_NOTIFY_PORT || '53'
  const port = (raw: string, what: string): number => {
    const n = Number(raw)
    if (/^\d{1,5}$/.test(raw) && n >= 1 && n <= 65535) return n
    r.problem(`${what} must be a port from 1 to 65535 (got "${raw}")`)
    return 53
  }
  const notifyPort = port(rawPort, 'HOSTAPI_DNS_NOTIFY_PORT')
  const secondaries: DnsSecondary[] = []
  for (const entry of (env.HOSTAPI_DNS_SECONDARIES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    // ip, ip/prefix, ipv4:port, [ipv6]:port
    const m = /^\[([^\]]+)\](?::(\d*))?$/.exec(entry) ?? /^([^:/]+):(\d*)$/.exec(entry)
    const ip = m?.[1] ?? entry
    const what = `HOSTAPI_DNS_SECONDARIES: "${entry}"`
    if (ip.includes('/')) {
      try {
        const [addr, prefixLength] = ipaddr.parseCIDR(ip)
        const single = prefixLength === (addr.kind() === 'ipv4' ? 32 : 128)
        secondaries.push({ address: addr.toString(), prefixLength, notifyPort: single ? notifyPort : null })
      } catch {
        r.problem(`${what} is not an IP address, CIDR range or address:port`)
      }
      continue
    }
    if (!ipaddr.IPv4.isValidFourPartDecimal(ip) && !ipaddr.IPv6.isValid(ip)) {
      r.problem(`${what} is not an IP address, CIDR range or address:port`)
      continue
    }
    const addr = ipaddr.parse(ip)
    const p = m?.[2] !== undefined ? port(m[2], what) : notifyPort
    secondaries.push({ address: addr.toString(), prefixLength: addr.kind() === 'ipv4' ? 32 : 128, notifyPort: p })
  }
  let tsigKey: DnsTransferConfig['tsigKey'] = null
  if (env.HOSTAPI_DNS_TSIG_KEY) {
    const key = parseTsigKey(env.HOSTAPI_DNS_TSIG_KEY)
    if (!key) r.problem('HOSTAPI_DNS_TSIG_KEY must be name:base64secret (hmac-sha256), e.g. transfer.key:c2VjcmV0')
    else tsigKey = { name: key.name, secret: key.secret.toString('base64') }
  }
  if (tsigKey && !secondaries.length) r.problem('HOSTAPI_DNS_TSIG_KEY is set but HOSTAPI_DNS_SECONDARIES is empty')
  if (secondaries.length && (env.HOSTAPI_DNS_DRIVER || 'builtin') !== 'builtin') {
    r.problem('HOSTAPI_DNS_SECONDARIES applies to the built-in DNS server only (HOSTAPI_DNS_DRIVER=builtin)')
  }
  const rawCatalog = (env.HOSTAPI_DNS_CATALOG_ZONE ?? DEFAULT_CATALOG_ZONE).trim().toLowerCase().replace(/\.$/, '')
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/
  const validCatalog = rawCatalog.length <= 253 && rawCatalog.split('.').every((l) => label.test(l))
  if (rawCatalog && (!validCatalog || !rawCatalog.includes('.')))
    r.problem(`HOSTAPI_DNS_CATALOG_ZONE must be a domain name of two labels or more (got "${rawCatalog}")`)
  const catalogZone = rawCatalog && validCatalog ? rawCatalog : null
  return { secondaries, tsigKey, catalogZone }
}
