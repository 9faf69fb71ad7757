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
  /** The request's headers, credentials masked. */
  request_headers: Record<string, string>
  status: number
  /** The answer's headers, cookies masked. */
  response_headers: Record<string, string>
  /** The answer's body: JSON parsed with secret fields redacted, else text; cut to ANSWER_MAX characters. */
  response_body: unknown
  /** Whether response_body was cut (it is then the first ANSWER_MAX characters of the redacted text). */
  response_truncated: boolean
  /** From the request's arrival to the answer's last byte, in milliseconds. */
  duration_ms: number
}

const SECRET = /pass(word)?|secret|private_key|auth_code|transfer_code|^(api_)?key$|token/i

/** Headers that carry a credential: the journal shows that they were sent, never their value. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'api-key', 'x-api-key', 'cookie', 'set-cookie'])
export const MASKED = '[redacted]'

/** The most characters of an answer's body the journal keeps; the ring's memory stays bounded by its size. */
export const ANSWER_MAX = 4096
/** Answers longer than this are kept as their size only. */
const PARSE_MAX = 65_536

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

/** Headers as the journal shows them: one string each (repeated ones joined), credentials masked. */
export function maskHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    const lower = name.toLowerCase()
    out[lower] = SECRET_HEADERS.has(lower) ? MASKED : Array.isArray(value) ? value.join(', ') : String(value)
  }
  return out
}

/**
 * An answer's body as the journal keeps it: JSON parsed and redacted, other text as it is, binary as its size; over
 * ANSWER_MAX characters, the first ANSWER_MAX of the redacted text (redacted before it is cut, so no secret leaks
 * through a cut).
 */
export function answerBody(
  payload: string | Buffer | null,
  contentType: string,
): { body: unknown; truncated: boolean } {
  if (payload === null || payload.length === 0) return { body: null, truncated: false }
  const textual = /^(application\/(json|problem\+json)|text\/)/i.test(contentType)
  if (!textual)
    return { body: `[${Buffer.byteLength(payload)} bytes of ${contentType || 'unknown type'}]`, truncated: false }
  // A large answer is not parsed for the journal: that would hold the event loop (a 50,000-record zone is megabytes).
  if (payload.length > PARSE_MAX)
    return { body: `[${Buffer.byteLength(payload)} bytes of ${contentType}: too large to keep]`, truncated: true }
  let text = typeof payload === 'string' ? payload : payload.toString('utf8')
  let body: unknown = text
  if (/json/i.test(contentType)) {
    try {
      body = redact(JSON.parse(text))
      text = JSON.stringify(body)
    } catch {
      body = text
    }
  }
  if (text.length <= ANSWER_MAX) return { body, truncated: false }
  return { body: text.slice(0, ANSWER_MAX), truncated: true }
}

/**
 * A call as recorded: what the request and its answer were, kept as they are (no copy, no parsing), and turned into
 * a JournalEntry (parsed, redacted, cut) only when the journal is read. A call costs the hot path a slot in the ring.
 */
export type JournalCall = Omit<
  JournalEntry,
  'id' | 'time' | 'request_headers' | 'response_headers' | 'response_body' | 'response_truncated'
> & {
  time: Date
  request_headers: Record<string, unknown>
  response_headers: Record<string, unknown>
  /** The answer's body as sent: null when there was none, or it was a stream (a file is not kept). */
  answer: string | Buffer | null
}

type Slot = { id: number; call: JournalCall; entry?: JournalEntry }

function entryOf(slot: Slot): JournalEntry {
  if (slot.entry) return slot.entry
  const { call } = slot
  const headers = maskHeaders(call.response_headers)
  const answer = answerBody(call.answer, headers['content-type'] ?? '')
  slot.entry = {
    id: slot.id,
    time: call.time.toISOString(),
    request_id: call.request_id,
    method: call.method,
    path: call.path,
    operation: call.operation,
    key_prefix: call.key_prefix,
    body: redact(call.body),
    request_headers: maskHeaders(call.request_headers),
    status: call.status,
    response_headers: headers,
    response_body: answer.body,
    response_truncated: answer.truncated,
    duration_ms: call.duration_ms,
  }
  // What was worked out is all the slot keeps: the answer as sent may be megabytes.
  slot.call = { ...call, body: null, answer: null, request_headers: {}, response_headers: {} }
  return slot.entry
}

/** The last `size` customer API calls of this process, oldest first, in a ring. */
export class RequestJournal {
  private ring: Slot[] = []
  /** Calls recorded since the last clear; the next one goes to slot `recorded % size`. */
  private recorded = 0
  private nextId = 1
  /** How many times the journal was emptied (a clear, a reset): a reader that sees it change drops what it shows. */
  clears = 0

  constructor(private readonly size: number) {}

  record(call: JournalCall): void {
    const slot: Slot = { id: this.nextId++, call }
    // An answer too large to keep is worked out now (to its size alone, without parsing), not held until read.
    if (call.answer && call.answer.length > PARSE_MAX) entryOf(slot)
    this.ring[this.recorded % this.size] = slot
    this.recorded++
  }

  /** The calls kept, oldest first: only those with an id over `after` (a reader's cursor), and of those the last `limit`. */
  list(limit?: number, after?: number): JournalEntry[] {
    const n = this.ring.length
    const start = this.recorded % n || 0
    const ordered = Array.from({ length: n }, (_, i) => this.ring[(start + i) % n])
    const newer = after === undefined ? ordered : ordered.filter((c) => c.id > after)
    const chosen = limit === undefined ? newer : newer.slice(-limit)
    return chosen.map(entryOf)
  }

  clear(): void {
    this.ring = []
    this.recorded = 0
    this.clears++
  }
}
