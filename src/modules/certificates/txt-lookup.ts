import { lookup, Resolver } from 'node:dns/promises'
import type { TxtLookup } from '../../drivers/ca/builtin.js'
import type { AddressLookup } from '../../drivers/ca/acme.js'
import type { AccountDns } from './account-dns.js'

/**
 * TXT values at a name as a CA sees them: from the account's own zone when hostapi hosts it (no waiting
 * for DNS propagation), otherwise from public DNS; a name that does not resolve has none.
 */
export function txtLookup(dns: () => AccountDns | null): TxtLookup {
  return async (accountId, fqdn) => {
    const hosted = dns()
    if (hosted && (await hosted.zoneOf(accountId, fqdn))) return hosted.txtValues(accountId, fqdn)
    try {
      const resolver = new Resolver({ timeout: 3000, tries: 1 })
      return (await resolver.resolveTxt(fqdn)).map((chunks) => chunks.join(''))
    } catch {
      return []
    }
  }
}

/** The addresses of a name as a CA sees them: from the account's own zone when hostapi hosts it, else public DNS. */
export function addressLookup(dns: () => AccountDns | null): AddressLookup {
  return async (accountId, fqdn) => {
    const hosted = dns()
    if (hosted && (await hosted.zoneOf(accountId, fqdn))) return hosted.addresses(accountId, fqdn)
    try {
      return (await lookup(fqdn, { all: true })).map((a) => a.address)
    } catch {
      return []
    }
  }
}
