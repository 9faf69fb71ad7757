// The work of a large zone import or record replace, run in a worker thread of the zone pool (see zone-work.ts)
// so it does not hold the event loop that every tenant's requests share. Errors come back as data: an ApiError
// does not survive the structured clone between threads.
import { ApiError, type ErrorKind } from '../../../errors.js'
import { checkRecordSet, normaliseRecord, type NormalisedRecord, type RecordInput } from '../../../lib/dns/records.js'
import { parseZone } from '../../../lib/dns/zone-file.js'
import { type JsonLimits, parseJsonBody } from '../../../lib/json-body.js'

export type ZoneTask =
  | { op: 'parse'; zone: string; text: string; maxRecords: number }
  | { op: 'records'; zone: string; records: (Omit<RecordInput, 'name'> & { name?: string | null })[] }
  /** A large request body's JSON text (a zone import's), parsed as the transport parses every body. */
  | { op: 'json'; text: string; limits: JsonLimits }

/** What a task gives: the parsed body for `json`, the records otherwise. */
export type TaskValue<T extends ZoneTask> = T extends { op: 'json' } ? unknown : NormalisedRecord[]

export type ZoneResult = { ok: true; value: unknown } | { ok: false; kind: ErrorKind; message: string }

/** Parses or validates inline (small inputs) or in a worker (large ones): a result, or an ApiError thrown. */
export function runZoneTask<T extends ZoneTask>(task: T): TaskValue<T> {
  return runTask(task) as TaskValue<T>
}

function runTask(task: ZoneTask): unknown {
  if (task.op === 'json') return parseJsonBody(task.text, task.limits)
  if (task.op === 'parse') return parseZone(task.zone, task.text, { maxRecords: task.maxRecords })
  return checkRecordSet(
    task.zone,
    task.records.map((r) => normaliseRecord(task.zone, { ...r, name: r.name })),
  )
}

export default function zoneWorker(task: ZoneTask): ZoneResult {
  try {
    return { ok: true, value: runTask(task) }
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, kind: err.kind, message: err.message }
    throw err
  }
}
