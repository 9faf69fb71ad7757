/** Publishes a zone to the DNS servers after it changed (the DNS driver); a no-op when none is wired. */
export type ZonePublisher = (domainName: string) => Promise<void>

/**
 * The next SOA serial: the date-based form `YYYYMMDDnn` when that is higher, otherwise the old serial plus
 * one, so it increases on every change however many changes a day brings.
 */
export function nextSerial(current: number, now: Date): number {
  const dated = Number(`${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}${String(now.getUTCDate()).padStart(2, '0')}00`)
  return Math.max(current + 1, dated)
}
