/** What the registry says about a name. */
export interface RegistryCheck {
  /**
   * `available`: can be registered; `unavailable`: registered with us already; `transfer`: registered
   * elsewhere, can be transferred in; `invalid`: not a name this registry can register.
   */
  status: 'available' | 'unavailable' | 'transfer' | 'invalid'
  /** Set for a premium name (priced above the extension's standard price), else null. */
  premium: { registerCents: number; renewCents: number } | null
}

/** The outcome of a registration or transfer: the new expiry day, or why it failed (`code` as order errors show it). */
export type RegistryResult = { ok: true; expiresOn: string } | { ok: false; code: string; description: string }

/** A DNSSEC key of a name as the parent zone publishes it: the DNSKEY (EPP secDNS keyData) and its DS. */
export interface RegistryDnssecKey {
  /** 257 (KSK) or 256 (ZSK). */
  flags: number
  /** Always 3. */
  protocol: number
  /** The DNSSEC algorithm number. */
  algorithm: number
  /** The DNSKEY public key, base64. */
  publicKey: string
  /** The DS record of the key: key tag, digest type (2: SHA-256) and digest (hex). */
  keyTag: number
  digestType: number
  digest: string
}

/**
 * This service's own domains, as the built-in registry sees them (the context hands it this port; a domain added
 * without the registry, as demo data is, is held all the same).
 */
export interface HeldNames {
  /** The renewal day (`YYYY-MM-DD`) of this service's domain `name`, or null when the service holds no such domain. */
  renewalDate(name: string): Promise<string | null>
}

/**
 * A domain registry (or the registrar in front of it). Every implementation passes `contract.test.ts`.
 * Names are in stored form: lower case, no trailing dot, punycode.
 */
export interface RegistryDriver {
  /** Whether `name` can be registered or transferred, and its premium price if it has one. */
  check(name: string): Promise<RegistryCheck>
  /**
   * Registers `name` for `years`; fails with code `unavailable` when it is taken. `requestId` names the request:
   * the same request asked again (its answer was lost) succeeds with the registration it made.
   */
  register(name: string, years: number, requestId?: string): Promise<RegistryResult>
  /**
   * Transfers `name` in with its auth code; a wrong or missing code fails with code `transfer_code`. `requestId` as
   * for `register`.
   */
  transfer(name: string, authCode: string | null, requestId?: string): Promise<RegistryResult>
  /** Renews a name registered with us by `years`; returns the new expiry day. */
  renew(name: string, years: number): Promise<{ expiresOn: string }>
  /** Ends the registration of `name` (the name becomes available again). */
  cancel(name: string): Promise<void>
  /** The auth (EPP) code of a name registered with us, created on first use. */
  authCode(name: string): Promise<string>
  /** Publishes `keys` as the DNSSEC keys (DS records) of `name` in its parent zone, replacing any; none: off. */
  setDnssec(name: string, keys: RegistryDnssecKey[]): Promise<void>
  /** The DNSSEC keys the parent zone publishes for `name` (none when DNSSEC is off for it). */
  dnssec(name: string): Promise<RegistryDnssecKey[]>
}
