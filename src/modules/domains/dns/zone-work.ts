// Parsing and validating a large zone import or record replace in worker threads (piscina), so that one
// tenant's 10 MB zone does not hold the event loop every other tenant's requests wait on. Small inputs stay
// inline: an ordinary request does not pay a thread hop.
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Piscina as PiscinaPool } from 'piscina'
import type { Logger } from 'pino'
import { ApiError, errors } from '../../../errors.js'
import { lazyRequire } from '../../../lazy-require.js'
import type { NormalisedRecord } from '../../../lib/dns/records.js'
import { renderZone, type ZoneMeta } from '../../../lib/dns/zone-file.js'
import { nextTurn } from '../../../lib/turns.js'
import type { Config } from '../../../config/config.js'
import type { JsonLimits } from '../../../lib/json-body.js'
import { RECORD_PAGE, runZoneTask, type TaskValue, type ZoneResult, type ZoneTask } from './zone.worker.js'

/** The zone size limits and the worker pool's size (HOSTAPI_ZONE_*). */
export type ZoneLimits = Config['zones']

export const DEFAULT_ZONE_LIMITS: ZoneLimits = {
  maxBytes: 10 * 1024 * 1024,
  maxRecords: 50_000,
  inlineBytes: 64 * 1024,
  inlineRecords: 200,
  workers: 1,
  queue: 4,
  perAccount: 1,
}

const piscina = lazyRequire<typeof import('piscina')>('piscina')

/**
 * The worker module: beside this one, compiled (dist) or as TypeScript (tsx, whose loader the worker threads
 * inherit through execArgv); from the single-file bundle in dist/src/cli, the compiled one in dist/src/modules/domains/dns.
 */
function workerFile(): string {
  const candidates = ['./zone.worker.js', './zone.worker.ts', '../modules/domains/dns/zone.worker.js'].map(
    (p) => new URL(p, import.meta.url),
  )
  const found = candidates.find((u) => fs.existsSync(fileURLToPath(u)))
  if (!found)
    throw new Error(`the zone worker module is missing (looked for ${candidates.map((u) => u.pathname).join(', ')})`)
  return found.href
}

/** Runs zone parsing and record-set validation inline or in the pool, within the limits. */
export class ZoneWork {
  private pool: PiscinaPool | null = null
  /** Large tasks running or waiting, per account: no account may take the whole queue. */
  private readonly inFlight = new Map<number, number>()

  /** `log`: where an error of the pool outside any task is said (a task's own error goes to its caller). */
  constructor(
    readonly limits: ZoneLimits = DEFAULT_ZONE_LIMITS,
    private readonly log: Logger | null = null,
  ) {}

  /** The records of a BIND zone text: 413 over maxBytes, 400 over maxRecords or for a bad line. */
  async parse(accountId: number, zone: string, text: string): Promise<NormalisedRecord[]> {
    // Cheap checks first: the length in UTF-16 units bounds the bytes from below (at most 3 bytes per unit).
    if (
      text.length > this.limits.maxBytes ||
      (text.length * 3 > this.limits.maxBytes && Buffer.byteLength(text) > this.limits.maxBytes)
    ) {
      throw errors.zoneFileTooLarge(this.limits.maxBytes)
    }
    const task: ZoneTask = { op: 'parse', zone, text, maxRecords: this.limits.maxRecords }
    return text.length <= this.limits.inlineBytes ? runZoneTask(task) : this.recordsInPool(accountId, task)
  }

  /** The validated record set of a replace: 400 over maxRecords or for a bad record. */
  async records(
    accountId: number,
    zone: string,
    records: Extract<ZoneTask, { op: 'records' }>['records'],
  ): Promise<NormalisedRecord[]> {
    if (records.length > this.limits.maxRecords) throw errors.tooManyDnsRecords(this.limits.maxRecords)
    const task: ZoneTask = { op: 'records', zone, records }
    return records.length <= this.limits.inlineRecords ? runZoneTask(task) : this.recordsInPool(accountId, task)
  }

  /**
   * The zone's BIND text (see renderZone). A large zone is rendered in the pool: its records go there as JSON
   * pages made between turns of the event loop, and its text comes back as bytes handed over, not copied.
   */
  async render(accountId: number, zone: string, meta: ZoneMeta, records: NormalisedRecord[]): Promise<string> {
    if (records.length <= this.limits.inlineRecords) return renderZone(zone, meta, records)
    const pages: string[] = []
    for (let i = 0; i < records.length; i += RECORD_PAGE) {
      if (i > 0) await nextTurn()
      const page = records.slice(i, i + RECORD_PAGE).map(({ type, name, value, ttl }) => ({ type, name, value, ttl }))
      pages.push(JSON.stringify(page))
    }
    const bytes = (await this.run(accountId, { op: 'render', zone, meta, pages })) as unknown as Uint8Array
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
  }

  /** A large request body's JSON, parsed in the pool (the transport parses smaller ones inline). */
  async json(accountId: number, text: string, limits: JsonLimits): Promise<unknown> {
    return this.run(accountId, { op: 'json', text, limits })
  }

  /** Stops the worker threads (waiting tasks fail). */
  async close(): Promise<void> {
    const pool = this.pool
    this.pool = null
    await pool?.destroy()
  }

  /** The records of a parse or validation run in the pool, read from its JSON pages a page per turn. */
  private async recordsInPool(accountId: number, task: ZoneTask): Promise<NormalisedRecord[]> {
    const pages = (await this.run(accountId, task)) as unknown as string[]
    const out: NormalisedRecord[] = []
    for (const [i, page] of pages.entries()) {
      if (i > 0) await nextTurn()
      for (const r of JSON.parse(page) as NormalisedRecord[]) out.push(r)
    }
    return out
  }

  /** Runs a large task in the pool, counted against the account while it runs or waits. */
  private async run<T extends ZoneTask>(accountId: number, task: T): Promise<TaskValue<T>> {
    const mine = this.inFlight.get(accountId) ?? 0
    if (mine >= this.limits.perAccount) throw errors.rateLimited(5)
    this.inFlight.set(accountId, mine + 1)
    try {
      return (await this.runInPool(task)) as TaskValue<T>
    } finally {
      const left = (this.inFlight.get(accountId) ?? 1) - 1
      if (left > 0) this.inFlight.set(accountId, left)
      else this.inFlight.delete(accountId)
    }
  }

  private async runInPool(task: ZoneTask): Promise<unknown> {
    if (!this.pool) {
      this.pool = new (piscina().Piscina)({
        filename: workerFile(),
        minThreads: 0,
        maxThreads: this.limits.workers,
        maxQueue: this.limits.queue,
        // Idle threads end after a while; a burst of imports reuses them.
        idleTimeout: 30_000,
        // One thread holds one task: the memory of a parse is bounded by maxBytes, not by the number waiting.
        concurrentTasksPerWorker: 1,
      })
      // A thread that fails while it holds no task: said, not thrown at the process (piscina starts another).
      this.pool.on('error', (err: Error) => this.log?.warn({ err: err.message }, 'zone worker pool error'))
    }
    const pool = this.pool
    let result: ZoneResult
    try {
      result = (await pool.run(task)) as ZoneResult
    } catch (err) {
      if (err instanceof Error && /queue is at limit|No task queue available/i.test(err.message))
        throw errors.zoneWorkBusy(5)
      throw err
    }
    if (!result.ok) throw new ApiError(result.kind, result.message)
    return result.value
  }
}
