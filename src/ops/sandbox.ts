import type { ManualClock } from '../clock.js'
import type { FaultInjector } from './faults.js'
import type { RequestJournal } from './journal.js'

/**
 * What a sandbox reset loaded: the accounts created, from the seed document given, the seed file, the demo or nothing,
 * and a new demo key.
 */
export interface SandboxReset {
  accounts: number
  seed: 'document' | 'file' | 'demo' | 'empty'
  demo_key: string | null
}

/** Sandbox mode (HOSTAPI_SANDBOX): `clock` is the context's clock. */
export interface Sandbox {
  clock: ManualClock
  faults: FaultInjector
  journal: RequestJournal
  /**
   * Deletes all account data and loads the seed again, or the seed document given (the seed file's format; checked
   * before anything is deleted); the composition root supplies it.
   */
  reset(document?: unknown): Promise<SandboxReset>
}
