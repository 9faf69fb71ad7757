import type { Generated, Selectable } from 'kysely'

/** Domains and their DNS records. */
export interface DomainTables {
  domains: DomainsTable
  dns_records: DnsRecordsTable
}

export interface DomainsTable {
  id: Generated<number>
  account_id: number
  /** Lower case, no trailing dot; unique across the service. */
  name: string
  /** `active`, `pending_cancellation`, `cancelled`, … */
  status: string
  status_id: number
  /** `YYYY-MM-DD`. */
  renewal_date: string
  /** JSON array of tags. */
  tags: string
  /** JSON array of {hostname, ipv4, ipv6}. */
  nameservers: string
  /** The nameserver profile alias the nameservers came from, if any. */
  nameserver_profile: string | null
  is_locked: number
  dnssec_enabled: number
  /** JSON array of {alg, flags, pubKey}. */
  dnssec_keys: string
  /** JSON {type, url} or null. */
  forwarder: string | null
  forwarder_enabled: number
  managed_dns: number
  /** JSON {owner, admin, tech, billing}: contact profile ids. */
  contacts: string
  /** The day a pending cancellation takes effect (`YYYY-MM-DD`), or null. */
  cancel_at: string | null
  /** SOA serial; increases on every change of the zone. */
  zone_serial: number
  created_at: string
  updated_at: string
}

export interface DnsRecordsTable {
  id: Generated<number>
  domain_id: number
  /** A, AAAA, CNAME, MX, TXT, NS, SRV, CAA, TLSA, SSHFP, DS. */
  type: string
  /** Owner name: FQDN, lower case, without the trailing dot (the apex is the domain name itself). */
  name: string
  /** The value in canonical presentation form (MX: `10 mail.example.com.`; TXT: the text itself, unquoted). */
  value: string
  ttl: number
  created_at: string
}

export type Domain = Selectable<DomainsTable>
export type DnsRecord = Selectable<DnsRecordsTable>
