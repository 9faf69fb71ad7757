import type { ColumnType, Generated, Selectable } from 'kysely'

/** Domains, their DNS records, the domain profiles (contacts, nameservers, DNS templates) and extension prices. */
export interface DomainTables {
  domains: DomainsTable
  dns_records: DnsRecordsTable
  contact_profiles: ContactProfilesTable
  nameserver_profiles: NameserverProfilesTable
  dns_templates: DnsTemplatesTable
  tld_prices: TldPricesTable
  dnssec_zone_keys: DnssecZoneKeysTable
  dns_zone_sync: DnsZoneSyncTable
  dns_catalog: DnsCatalogTable
}

/** The built-in DNS server's catalog zone: its serial and the digest of the member zones it lists (one row). */
export interface DnsCatalogTable {
  id: number
  serial: number
  /** sha256 of the members (`id name` lines, by id): a different set of zones raises the serial. */
  members_digest: string
}

/** The push state of a zone that a pushing DNS driver serves (PowerDNS), one row per zone name. */
export interface DnsZoneSyncTable {
  /** The apex, lower case, no trailing dot. */
  zone: string
  /** The serial of the zone as last pushed in full; null before the first push. */
  pushed_serial: ColumnType<number | null, number | null | undefined, number | null>
  pushed_at: string | null
  /** When the last change was handed to the push queue. */
  changed_at: string | null
  /** Since when a change waits to be pushed; null when the last push took everything. */
  pending_since: string | null
  last_error: string | null
  last_error_at: string | null
}

/** The DNSSEC signing key of a zone hostapi serves with DNSSEC on (one per domain). */
export interface DnssecZoneKeysTable {
  id: Generated<number>
  domain_id: number
  /** The DNSSEC algorithm number (13: ECDSA P-256/SHA-256). */
  algorithm: number
  /** DNSKEY flags (257). */
  flags: number
  /** The DNSKEY public key, base64. */
  public_key: string
  /** PKCS#8 PEM, sealed with the secret key (a SecretBox envelope bound to the domain id). */
  private_key: string
  created_at: string
}

/** One domain of an account. */
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

/** One DNS record of a domain. */
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

/** A domain row as stored (its JSON columns as text; domains.repository decodes them). */
export type DomainRow = Selectable<DomainsTable>
/** A DNS record row. */
export type DnsRecord = Selectable<DnsRecordsTable>

/** A contact profile (domain handle) of an account. */
export interface ContactProfilesTable {
  id: Generated<number>
  account_id: number
  name: string
  /** JSON: the profile fields as the API shows them (firstname, lastname, street, …, defaults). */
  profile: string
  created_at: string
  updated_at: string
}

/** A named nameserver set of an account. */
export interface NameserverProfilesTable {
  id: Generated<number>
  account_id: number
  /** Unique per account; `default-mijnhost` is reserved for the built-in profile. */
  alias: string
  /** JSON array of {hostname, ipv4, ipv6}. */
  nameservers: string
  is_default: number
  created_at: string
  updated_at: string
}

/** A DNS template of an account. */
export interface DnsTemplatesTable {
  id: Generated<number>
  account_id: number
  alias: string
  is_default: number
  /** JSON array of {type, name (relative, empty = apex), value, ttl}. */
  records: string
  created_at: string
  updated_at: string
}

/** The price list of one extension. */
export interface TldPricesTable {
  id: Generated<number>
  /** Without the leading dot: `com`, `co.uk`. */
  extension: string
  register_cents: number
  renew_cents: number
  transfer_cents: number
  min_period: number
  max_period: number
  supports_dnssec: number
  supports_privacy: number
  requires_auth_code: number
}

/** A contact profile row. */
export type ContactProfile = Selectable<ContactProfilesTable>
/** A nameserver profile row. */
export type NameserverProfile = Selectable<NameserverProfilesTable>
/** A DNS template row. */
export type DnsTemplate = Selectable<DnsTemplatesTable>
/** An extension price row. */
export type TldPrice = Selectable<TldPricesTable>
