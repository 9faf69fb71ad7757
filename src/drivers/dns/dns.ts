import type { ZoneChange } from '../../lib/dns/zone-serial.js'

/**
 * Serves the DNS zones of the domains hostapi manages. The built-in implementation is an authoritative
 * server over UDP and TCP that answers from the zones a `ZoneSource` gives it; others may push zones to an
 * external provider. Every implementation passes `contract.test.ts`.
 */
export interface DnsDriver {
  /** Starts serving; resolves once queries are accepted (a no-op when the driver is switched off). */
  start(): Promise<void>
  /** Stops serving and releases every socket; safe to call twice or before `start()`. */
  stop(): Promise<void>
  /**
   * Tells the server what changed in a zone (see `ZoneChange`: records at some names, the zone as a whole, or the
   * zone removed), so the next answer reflects the change. Called after the change is committed; never throws
   * for an unknown domain. A driver pushing to another server throws when that server cannot take the change
   * (PowerDNS: `DnsPushError`); pushing the same change again later is safe.
   */
  publish(change: ZoneChange): Promise<void>
  /** Where queries are answered (UDP and TCP on the same port), or null when not serving. */
  address(): { host: string; port: number } | null
  /**
   * True when `publish()` sends the change to another server, which may be down: the DNS module then delivers
   * changes through the job queue, retried with backoff until they land. False when it only reads local state.
   */
  readonly pushes: boolean
  /**
   * Compares the zones the other server holds (all, or those named) with the zone source, fixes the drift and
   * reports it; absent on a driver that serves straight from the zone source and so cannot drift.
   */
  resync?(names?: string[], progress?: ResyncProgress): Promise<ZoneDrift[]>
  /** Throws unless the other server answers: after a failed push, it tells when queued pushes may go out again. */
  ping?(): Promise<void>
  /**
   * The most bytes one record set may take in a push (the other server's request size limit); absent when there is
   * none. The DNS module refuses a larger record set at the API rather than accept a change that can never land.
   */
  readonly maxRecordSetBytes?: number
}

/** Told after each zone `resync()` compared: how many are done of how many it compares. */
export type ResyncProgress = (done: number, total: number) => void

/** The drift between a pushing driver's server and hostapi found for one zone by `resync()`. */
export interface ZoneDrift {
  /** The apex (lower case, no trailing dot). */
  zone: string
  /** hostapi serves the zone and the server did not have it. */
  missing: boolean
  /** The server had the zone and hostapi does not serve it (deleted only when hostapi created it). */
  extra: boolean
  /** The RRsets (`name TYPE`, name with trailing dot) the server had otherwise than hostapi, or not at all. */
  differing: string[]
  /** Why the zone could not be compared or fixed (the server refused or did not answer); absent when it was. */
  error?: string
}

/** One zone that is served: what the SOA and apex NS records are built from. */
export interface ServedZone {
  /** Stable while the domain exists; a new domain of the same name gets another. */
  id: number
  /** The apex, as stored (lower case, no trailing dot). */
  name: string
  /** The SOA serial; it rises with every change of the zone, so an equal serial means an unchanged zone. */
  serial: number
  /** The domain's nameservers as stored: JSON, an array of `{ hostname, ipv4?, ipv6? }` (bad data is tolerated). */
  nameserversJson: string
  /** The key the zone is signed with when DNSSEC is on for it; absent or null when it is off. */
  dnssec?: ZoneSigningKey | null
}

/** The key of a zone with DNSSEC on: hostapi keeps it (sealed at rest); a driver signs with it or hands it on. */
export interface ZoneSigningKey {
  /** The private key as PKCS#8 PEM: ECDSA P-256 for algorithm 13, the only one so far. */
  privateKeyPem: string
  /** The DNSKEY flags (257: a combined signing key, published as the zone's secure entry point). */
  flags: number
  /** The DNSSEC algorithm number (13). */
  algorithm: number
}

/** One stored record of a zone. */
export interface ZoneRecord {
  /** Upper case (`A`, `MX`, …). */
  type: string
  /** The owner name: fully qualified, lower case, no trailing dot. */
  name: string
  /** The value in presentation form, as stored. */
  value: string
  ttl: number
}

/** The port through which a DNS driver reads the zones it serves; the DNS module implements it. */
export interface ZoneSource {
  /** The served zones whose apex is one of `names`, oldest first (empty for no names). */
  servedZones(names: string[]): Promise<ServedZone[]>
  /** One served zone by id, or undefined when it is gone or no longer served. */
  servedZone(id: number): Promise<ServedZone | undefined>
  /** Every record of one zone, in insertion order (none for an unknown id). */
  zoneRecords(zoneId: number): Promise<ZoneRecord[]>
  /** The apex of every served zone, oldest first. */
  servedZoneNames(): Promise<string[]>
  /**
   * Every served zone with the serial of the catalog zone listing them (RFC 9432): one serial per set of zones on
   * every instance, raised when the set changes. Read at the committed state.
   */
  catalog(): Promise<ZoneCatalog>
}

/** The members of the catalog zone and its serial. */
export interface ZoneCatalog {
  serial: number
  /** Every served zone (id and apex), by id. */
  zones: { id: number; name: string }[]
}
