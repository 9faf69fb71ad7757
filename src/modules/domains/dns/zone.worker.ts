// The work of a large zone import or record replace, run in a worker thread of the zone pool (see zone-work.ts)
// so it does not hold the event loop that every tenant's requests share. Errors come back as data: an ApiError
// does not survive the structured clone between threads.
import { ApiError, type ErrorKind } from '../../../errors.js'
import { checkRecordSet, normaliseRecord, type NormalisedRecord, type RecordInput } from '../../../lib/dns/records.js'
import { parseZone, renderZone, type ZoneMeta } from '../../../lib/dns/zone-file.js'
import { type JsonLimits, parseJsonBody } from '../../../lib/json-body.js'
import { lazyRequire } from '../../../lazy-require.js'

const piscina = lazyRequire<typeof import('piscina')>('piscina')

export type ZoneTask =
  | { op: 'parse'; zone: string; text: string; maxRecords: number }
  | { op: 'records'; zone: string; records: (Omit<RecordInput, 'name'> & { name?: string | null })[] }
  /** A large request body's JSON text (a zone import's), parsed as the transport parses every body. */
  | { op: 'json'; text: string; limits: JsonLimits }
  /** A zone's BIND text, from its records sent as JSON pages (strings are copied whole, objects one by one). */
  | { op: 'render'; zone: string; meta: ZoneMeta; pages: string[] }

/** What a task gives: the parsed body for `json`, the records otherwise. */
export type TaskValue<T extends ZoneTask> = T extends { op: 'json' }
  ? unknown
  : T extends { op: 'render' }
    ? string
    : NormalisedRecord[]

export type ZoneResult = { ok: true; value: unknown } | { ok: false; kind: ErrorKind; message: string }

/** Parses or validates inline (small inputs) or in a worker (large ones): a result, or an ApiError thrown. */
export function runZoneTask<T extends ZoneTask>(task: T): TaskValue<T> {
  return runTask(task) as TaskValue<T>
}

function runTask(task: ZoneTask): unknown {
  if (task.op === 'json') return parseJsonBody(task.text, task.limits)
  if (task.op === 'parse') return parseZone(task.zone, task.text, { maxRecords: task.maxRecords })
  if (task.op === 'render') {
    const records = task.pages.flatMap((p) => JSON.parse(p) as NormalisedRecord[])
    return renderZone(task.zone, task.meta, records)
  }
  return checkRecordSet(
    task.zone,
    task.records.map((r) => normaliseRecord(task.zone, { ...r, name: r.name })),
  )
}

/** Records per JSON page between the pool and the event loop's thread: each is read or made in one turn. */
export const RECORD_PAGE = 2000

/** `records` as JSON pages of RECORD_PAGE records (strings are copied whole between threads, objects one by one). */
export function toPages(records: readonly NormalisedRecord[]): string[] {
  const pages: string[] = []
  for (let i = 0; i < records.length; i += RECORD_PAGE) pages.push(JSON.stringify(records.slice(i, i + RECORD_PAGE)))
  return pages
}

export default function zoneWorker(task: ZoneTask): ZoneResult {
  try {
    const value = runTask(task)
    if (task.op === 'json') return { ok: true, value }
    // Records go back as JSON pages: the event loop's thread reads them a page at a time (see ZoneWork).
    if (task.op !== 'render') return { ok: true, value: toPages(value as NormalisedRecord[]) }
    // A zone's text goes back as UTF-8 bytes whose memory is handed over, not copied by the event loop's thread.
    const bytes = new Uint8Array(Buffer.from(value as string, 'utf8'))
    const P = piscina().Piscina
    const moved = { [P.transferableSymbol]: [bytes.buffer], [P.valueSymbol]: { ok: true, value: bytes } }
    return P.move(moved as never) as unknown as ZoneResult
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, kind: err.kind, message: err.message }
    throw err
  }
}
