import { lookup, Resolver } from 'node:dns/promises'
import type { TxtLookup } from '../../drivers/ca/builtin.js'
import type { AddressLookup } from '../../drivers/ca/acme.js'
import type { AccountDns } from './account-dns.js'

/**
 * TXT values at a name as a CA sees them: from the account's own zone when hostapi hosts it (no waiting
 * for DNS propagation), otherwise from public DNS; a name that does not resolve has none.
 */
export function txtLookup(hosted: AccountDns): TxtLookup {
  return async (accountId, fqdn) => {
    if (await hosted.zoneOf(accountId, fqdn)) return hosted.txtValues(accountId, fqdn)
    try {
      const resolver = new Resolver({ timeout: 3000, tries: 1 })
      return (await resolver.resolveTxt(fqdn)).map((chunks) => chunks.join(''))
    } catch {
      return []
    }
  }
}

/** Where a DNS server answers queries. */
export interface DnsServerAddress {
  host: string
  port: number
}

/** The TXT values at `fqdn` as `server` answers them; none when it has none or does not answer. */
async function txtFrom(server: DnsServerAddress, fqdn: string): Promise<string[]> {
  const resolver = new Resolver({ timeout: 2000, tries: 2 })
  resolver.setServers([server.host.includes(':') ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`])
  try {
    return (await resolver.resolveTxt(fqdn)).map((chunks) => chunks.join(''))
  } catch {
    return []
  }
}

/**
 * TXT values at a name as a CA will see them. For a zone the account hosts here, the values every one of the
 * zone's serving nameservers answers (`serving`: where the DNS driver serves, the built-in server or PowerDNS)
 * — a change not pushed yet, or a server that lags or is down, is not seen, as the CA would not see it; with no
 * serving address known, the zone's records in the database. Other names: public DNS.
 */
export function servedTxtLookup(hosted: AccountDns, serving: () => DnsServerAddress[]): TxtLookup {
  const fromDatabase = txtLookup(hosted)
  return async (accountId, fqdn) => {
    const servers = serving()
    if (servers.length === 0 || !(await hosted.zoneOf(accountId, fqdn))) return fromDatabase(accountId, fqdn)
    const answers = await Promise.all(servers.map((server) => txtFrom(server, fqdn)))
    return answers.reduce((common, values) => common.filter((v) => values.includes(v)))
  }
}

/** The addresses of a name as a CA sees them: from the account's own zone when hostapi hosts it, else public DNS. */
export function addressLookup(hosted: AccountDns): AddressLookup {
  return async (accountId, fqdn) => {
    if (await hosted.zoneOf(accountId, fqdn)) return hosted.addresses(accountId, fqdn)
    try {
      return (await lookup(fqdn, { all: true })).map((a) => a.address)
    } catch {
      return []
    }
  }
}
