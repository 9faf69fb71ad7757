import ipaddr from 'ipaddr.js'

// ::/96, the deprecated IPv4-compatible IPv6 addresses (`::127.0.0.1` is `::7f00:1`): ipaddr.js classes them
// `unicast`, yet they carry an IPv4 address that some stacks still reach.
const COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96')

/**
 * True for an address on the public internet: ipaddr.js classes it as plain `unicast` (after an IPv4-mapped
 * IPv6 address is read as the IPv4 one). Loopback, private (10/8, 172.16/12, 192.168/16), carrier-grade NAT,
 * link-local (169.254/16, the cloud metadata address among them), unique-local (fc00::/7), multicast,
 * documentation, reserved and translation ranges are not, nor is any IPv6 form that embeds an IPv4 address other
 * than the mapped one: IPv4-compatible (::/96), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and Teredo
 * (2001::/32), whatever the IPv4 address inside.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  const ip = ipaddr.process(address)
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).match(COMPATIBLE)) return false
  return ip.range() === 'unicast'
}

/** A URL's host name without the brackets of an IPv6 literal (`[::1]` → `::1`). */
export const bareHost = (hostname: string): string => hostname.replace(/^\[(.*)\]$/, '$1')

/** True when `host` is an IPv4 or IPv6 literal (IPv6 possibly in brackets). */
export const isIpLiteral = (host: string): boolean => ipaddr.isValid(bareHost(host))

/**
 * True for a name that means this machine whatever DNS says (RFC 6761): `localhost` and the names under it, in any
 * case and with any trailing dots (`LOCALHOST.`, `a.Localhost..`).
 */
export const isLocalhostName = (host: string): boolean => {
  const name = host.toLowerCase().replace(/\.+$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}
