import ipaddr from 'ipaddr.js'

/**
 * True for an address on the public internet: ipaddr.js classes it as plain `unicast` (after an IPv4-mapped
 * IPv6 address is read as the IPv4 one). Loopback, private (10/8, 172.16/12, 192.168/16), carrier-grade NAT,
 * link-local (169.254/16, the cloud metadata address among them), unique-local (fc00::/7), multicast,
 * documentation, reserved and translation ranges are not.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  return ipaddr.process(address).range() === 'unicast'
}

/** A URL's host name without the brackets of an IPv6 literal (`[::1]` → `::1`). */
export const bareHost = (hostname: string): string => hostname.replace(/^\[(.*)\]$/, '$1')

/** True when `host` is an IPv4 or IPv6 literal (IPv6 possibly in brackets). */
export const isIpLiteral = (host: string): boolean => ipaddr.isValid(bareHost(host))
