import { ApiError } from '../../errors.js'
import type { DnsService } from '../domains/dns/dns.service.js'
import type { DomainsService } from '../domains/domains.service.js'

/** What certificates need from DNS hosting: the account's zone of a name, and its TXT records. */
export interface AccountDns {
  /** The account's domain whose zone holds `fqdn`, or null when the account does not host it. */
  zoneOf(accountId: number, fqdn: string): Promise<string | null>
  /** True when `fqdn` lies in a zone hostapi holds for another account (the name or one of its ancestors). */
  heldElsewhere(accountId: number, fqdn: string): Promise<boolean>
  /** The TXT values published at `fqdn` in the account's zone (empty when none or not hosted). */
  txtValues(accountId: number, fqdn: string): Promise<string[]>
  /** The A and AAAA values at `fqdn` in the account's zone (empty when none or not hosted). */
  addresses(accountId: number, fqdn: string): Promise<string[]>
  /** Adds a TXT record with `value` at `fqdn` in the account's zone `zone`, keeping the other records. */
  addTxt(accountId: number, zone: string, fqdn: string, value: string): Promise<void>
  /** Removes the TXT record with `value` at `fqdn` from the account's zone `zone`, if it is there. */
  removeTxt(accountId: number, zone: string, fqdn: string, value: string): Promise<void>
}

const VALIDATION_TTL = 300

/** Certificates' view of DNS hosting: the account's domains are its zones; records change through the DNS service. */
export function accountDnsOf(domains: DomainsService, dns: DnsService): AccountDns {
  const zoneOf = async (accountId: number, fqdn: string): Promise<string | null> => {
    const labels = fqdn.toLowerCase().split('.')
    // The longest of the account's domains that holds the name: a sub-domain may be a zone of its own.
    for (let i = 0; i <= labels.length - 2; i++) {
      try {
        return (await domains.requireOwned(accountId, labels.slice(i).join('.'))).name
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
      }
    }
    return null
  }
  /** The values of the records of `types` at `fqdn` in the account's zone `zone`, or none when it has none. */
  const valuesAt = async (accountId: number, fqdn: string, types: string[]) => {
    const zone = await zoneOf(accountId, fqdn)
    if (!zone) return []
    const { records } = await dns.get(accountId, zone)
    return records.filter((r) => types.includes(r.type) && r.name === `${fqdn.toLowerCase()}.`).map((r) => r.value)
  }
  return {
    zoneOf,
    async heldElsewhere(accountId, fqdn) {
      const name = fqdn.toLowerCase().replace(/\.$/, '')
      const atOrAbove = (zone: string) => name === zone || name.endsWith(`.${zone}`)
      return (await domains.overlapping(name)).some((d) => d.account_id !== accountId && atOrAbove(d.name))
    },
    txtValues: (accountId, fqdn) => valuesAt(accountId, fqdn, ['TXT']),
    addresses: (accountId, fqdn) => valuesAt(accountId, fqdn, ['A', 'AAAA']),
    async addTxt(accountId, zone, fqdn, value) {
      await dns.add(accountId, zone, { type: 'TXT', name: `${fqdn}.`, value, ttl: VALIDATION_TTL })
    },
    async removeTxt(accountId, zone, fqdn, value) {
      await dns.remove(accountId, zone, { type: 'TXT', name: `${fqdn}.`, value })
    },
  }
}
