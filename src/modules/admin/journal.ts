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

/** Replaces the values of secret-looking fields, so the journal never shows a password. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 20 || value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1))
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET.test(k) ? '[redacted]' : redact(v, depth + 1)]))
}

/** The last `size` customer API calls of this process, oldest first. */
export class RequestJournal {
  private entries: JournalEntry[] = []
  private nextId = 1

  constructor(private readonly size: number) {}

  record(entry: Omit<JournalEntry, 'id'>): void {
    this.entries.push({ id: this.nextId++, ...entry, body: redact(entry.body) })
    if (this.entries.length > this.size) this.entries.splice(0, this.entries.length - this.size)
  }

  list(limit?: number): JournalEntry[] {
    return limit === undefined ? [...this.entries] : this.entries.slice(-limit)
  }

  clear(): void {
    this.entries = []
  }
}
