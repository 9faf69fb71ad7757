import os from 'node:os'
import type { EnvReader } from './env-reader.js'

/**
 * The processes `hostapi serve` runs on the same ports: `count` workers (HOSTAPI_WORKERS or `--workers`, one per
 * core by default); more than one starts a primary process that forks them. `pinned` says why the count was set to
 * one whatever was asked (sandbox mode, an in-memory SQLite database), null when it was not.
 */
export interface WorkersConfig {
  count: number
  pinned: string | null
}

/** HOSTAPI_WORKERS, pinned to one where the state of the server must live in one process. */
export function workersConfig(
  r: EnvReader,
  demo: boolean,
  database: { dialect: string; file?: string },
): WorkersConfig {
  const sandbox = r.bool('HOSTAPI_SANDBOX', demo)
  const memoryDatabase = database.dialect === 'sqlite' && database.file === ':memory:'
  const asked = r.int('HOSTAPI_WORKERS', os.availableParallelism(), 1, 1024)
  const pin = sandbox
    ? 'sandbox mode (HOSTAPI_SANDBOX, on with the demo account) keeps its clock, faults and journal in one process'
    : memoryDatabase
      ? 'an in-memory SQLite database (sqlite::memory:) lives in one process'
      : null
  if (pin === null || asked === 1) return { count: asked, pinned: null }
  return { count: 1, pinned: `one worker instead of ${asked}: ${pin}` }
}
