/** A record as the size check reads it. */
interface SizedRecord {
  type: string
  name: string
  value: string
}

/**
 * An upper bound of the bytes one record set takes as a JSON change to a DNS server's API (PowerDNS's RRset
 * form): the owner name twice over, the fields, and each value escaped for JSON and, for TXT, quoted in strings
 * of 255 bytes with its control bytes written `\ddd`.
 */
export function recordSetBytes(name: string, values: string[]): number {
  let bytes = 2 * Buffer.byteLength(name) + 96
  for (const v of values) {
    const raw = Buffer.byteLength(v)
    // `"` and `\` become `\"` and `\\`, then JSON escapes each backslash again: 3 more bytes each; a control byte
    // becomes `\ddd`, then `\\ddd` in JSON: 4 more; every string of 255 bytes is quoted and spaced: 3 more.
    const quoted = v.match(/["\\]/g)?.length ?? 0
    const control = v.match(/[\x00-\x1f\x7f]/g)?.length ?? 0
    bytes += raw + 3 * quoted + 4 * control + 3 * Math.ceil((raw + 1) / 255) + 32
  }
  return bytes
}

/** The largest record set of `records` by `recordSetBytes`, or null for none. */
export function largestRecordSet(records: SizedRecord[]): { type: string; name: string; bytes: number } | null {
  const sets = new Map<string, { type: string; name: string; values: string[] }>()
  for (const r of records) {
    const key = `${r.type} ${r.name}`
    const set = sets.get(key)
    if (set) set.values.push(r.value)
    else sets.set(key, { type: r.type, name: r.name, values: [r.value] })
  }
  let largest: { type: string; name: string; bytes: number } | null = null
  for (const s of sets.values()) {
    const bytes = recordSetBytes(s.name, s.values)
    if (!largest || bytes > largest.bytes) largest = { type: s.type, name: s.name, bytes }
  }
  return largest
}
