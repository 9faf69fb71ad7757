/**
 * What changed in one zone, as the DNS servers are told after the change is committed. Every kind names the
 * zone in `domain`: its apex, in stored form (lower case, no trailing dot); a driver still accepts any case
 * form and a trailing dot.
 */
export type ZoneChange =
  | {
      domain: string
      /** Records were added, changed or deleted; the zone's nameservers and status stayed as they were. */
      kind: 'records'
      /**
       * The owner names whose records changed, in stored form (fully qualified, lower case, no trailing dot);
       * absent when not known, and then any name of the zone may have changed.
       */
      names?: string[]
    }
  | {
      domain: string
      /**
       * The zone as a whole changed: its nameservers, DNSSEC, status or serial, it started being served
       * (a new domain), or all its records were replaced (a replace or zone import). Read it afresh.
       */
      kind: 'zone'
    }
  | {
      domain: string
      /** The domain is no longer served (it ended or was deleted): its zone should be dropped. */
      kind: 'removed'
    }

/**
 * The next SOA serial: the date-based form `YYYYMMDDnn` when that is higher, otherwise the old serial plus
 * one, so it increases on every change however many changes a day brings.
 */
export function nextSerial(current: number, now: Date): number {
  const dated = Number(
    `${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}${String(now.getUTCDate()).padStart(2, '0')}00`,
  )
  return Math.max(current + 1, dated)
}
