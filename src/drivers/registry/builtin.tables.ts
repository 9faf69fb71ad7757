import type { Generated } from 'kysely'

/** The built-in registry's tables. */
export interface RegistryTables {
  registry_domains: RegistryDomainsTable
  premium_names: PremiumNamesTable
  reserved_names: ReservedNamesTable
}

/** Names the registry refuses to register, with the operator's reason. */
export interface ReservedNamesTable {
  id: Generated<number>
  name: string
  reason: string
  created_at: string
}

/** A name the built-in registry holds. */
export interface RegistryDomainsTable {
  id: Generated<number>
  /** Lower case, no trailing dot. */
  name: string
  auth_code: string
  /** `YYYY-MM-DD`. */
  expires_on: string
  /** JSON array of the DNSSEC keys published for the name in the parent zone (`RegistryDnssecKey`). */
  dnssec_keys: Generated<string>
  /** The request that registered or transferred the name (its retry gets the same registration), if it gave one. */
  request_id: string | null
  created_at: string
  updated_at: string
}

/** Names the registry prices above the extension's standard price. */
export interface PremiumNamesTable {
  id: Generated<number>
  name: string
  register_cents: number
  renew_cents: number
}
