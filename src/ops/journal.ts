/** One customer API call as the sandbox journal keeps it. */
export interface JournalEntry {
  id: number
  time: string
  request_id: string
  method: string
  path: string
  operation: string | null
  key_prefix: string | null
  body: unknown
  status: number
}

const SECRET = /pass(word)?|secret|private_key|auth_code|transfer_code/i

/** How deep the journal keeps a body; deeper values become TOO_DEEP. */
const MAX_DEPTH = 20
export const TOO_DEEP = '[nested too deep]'

/**
 * Replaces the values of secret-looking fields, so the journal never shows a password, and what is nested
 * deeper than MAX_DEPTH: unchecked, it could hold a secret, and a body nested thousands deep (valid JSON)
 * overflows the stack of JSON.stringify when the journal is read.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value
  if (depth > MAX_DEPTH) return TOO_DEEP
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1))
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, SECRET.test(k) ? '[redacted]' : redact(v, depth + 1)]),
  )
}

/** A call as recorded: its time as a Date. */
export type JournalCall = Omit<JournalEntry, 'id' | 'time'> & { time: Date }

/** The last `size` customer API calls of this process, oldest first, in a ring; times are written when the journal is read. */
export class RequestJournal {
  private ring: (JournalCall & { id: number })[] = []
  /** Calls recorded since the last clear; the next one goes to slot `recorded % size`. */
  private recorded = 0
  private nextId = 1

  constructor(private readonly size: number) {}

  record(call: JournalCall): void {
    this.ring[this.recorded % this.size] = { id: this.nextId++, ...call, body: redact(call.body) }
    this.recorded++
  }

  list(limit?: number): JournalEntry[] {
    const n = this.ring.length
    const start = this.recorded % n || 0
    const ordered = Array.from({ length: n }, (_, i) => this.ring[(start + i) % n])
    const chosen = limit === undefined ? ordered : ordered.slice(-limit)
    return chosen.map((c) => ({ ...c, time: c.time.toISOString() }))
  }

  clear(): void {
    this.ring = []
    this.recorded = 0
  }
}
