import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Piscina as PiscinaPool } from 'piscina'
import type { Logger } from 'pino'
import { errors } from '../../../errors.js'
import { lazyRequire } from '../../../lazy-require.js'
import { type Sanitised, type SanitiseTask, sanitiseAll } from './sanitise.worker.js'

const piscina = lazyRequire<typeof import('piscina')>('piscina')

/**
 * Messages with markup longer than this are sanitised in the worker; shorter ones (and any text without markup)
 * inline. sanitize-html's time grows with the square of the nesting: 2 KiB of nested tags takes about a
 * millisecond, 64 KiB seconds.
 */
export const INLINE_MARKUP_CHARS = 2048

const hasMarkup = (s: string) => /<[a-zA-Z!/?]/.test(s)

/** The worker module beside this one (compiled or TypeScript), or the compiled one from the single-file bundle. */
function workerFile(): string {
  const candidates = [
    './sanitise.worker.js',
    './sanitise.worker.ts',
    '../modules/account/tickets/sanitise.worker.js',
  ].map((p) => new URL(p, import.meta.url))
  const found = candidates.find((u) => fs.existsSync(fileURLToPath(u)))
  if (!found)
    throw new Error(
      `the sanitiser worker module is missing (looked for ${candidates.map((u) => u.pathname).join(', ')})`,
    )
  return found.href
}

/** Sanitises ticket messages off the event loop when they are long and hold markup. */
export class SanitisePool {
  private pool: PiscinaPool | null = null

  /**
   * `queue`: tasks that may wait for the one thread; beyond, 503 with Retry-After. `log`: where an error of the pool
   * outside any task is said (a task's own error goes to its caller).
   */
  constructor(
    private readonly queue = 16,
    private readonly log: Logger | null = null,
  ) {}

  /** Each input as safe HTML (and plain text when `text`), in the order given. */
  async sanitise(inputs: string[], text: boolean): Promise<Sanitised[]> {
    const heavy = inputs.some((s) => s.length > INLINE_MARKUP_CHARS && hasMarkup(s))
    const task: SanitiseTask = { inputs, text }
    if (!heavy) return sanitiseAll(task)
    if (!this.pool) {
      this.pool = new (piscina().Piscina)({
        filename: workerFile(),
        minThreads: 0,
        maxThreads: 1,
        maxQueue: this.queue,
        idleTimeout: 30_000,
        concurrentTasksPerWorker: 1,
      })
      // A thread that fails while it holds no task: said, not thrown at the process (piscina starts another).
      this.pool.on('error', (err: Error) => this.log?.warn({ err: err.message }, 'sanitiser pool error'))
    }
    try {
      return (await this.pool.run(task)) as Sanitised[]
    } catch (err) {
      if (err instanceof Error && /queue is at limit|No task queue available/i.test(err.message))
        throw errors.sanitiserBusy(5)
      throw err
    }
  }

  /** Stops the worker thread. */
  async close(): Promise<void> {
    const pool = this.pool
    this.pool = null
    await pool?.destroy()
  }
}
