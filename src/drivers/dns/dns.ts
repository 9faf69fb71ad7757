/**
 * Serves the DNS zones of the domains hostapi manages. The built-in implementation is an authoritative
 * server over UDP and TCP that answers from the database; others may push zones to an external provider.
 * Every implementation passes `contract.test.ts`.
 */
export interface DnsDriver {
  /** Starts serving; resolves once queries are accepted (a no-op when the driver is switched off). */
  start(): Promise<void>
  /** Stops serving and releases every socket; safe to call twice or before `start()`. */
  stop(): Promise<void>
  /**
   * Tells the server that the zone of `domain` changed (records, nameservers, status, serial), so the next
   * answer reflects the change. Called after the change is committed; never throws for an unknown domain.
   */
  publish(domain: string): Promise<void>
  /** Where queries are answered (UDP and TCP on the same port), or null when not serving. */
  address(): { host: string; port: number } | null
}

/** The statuses of a domain whose zone is served. */
export const SERVED_DOMAIN_STATUSES = ['active', 'pending_cancellation'] as const
