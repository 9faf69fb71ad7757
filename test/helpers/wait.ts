/*
 * Waiting in tests: for a condition, an event or a deadline, never for a fixed time. This is the only file under
 * test/ that may call setTimeout or import node:timers/promises (test/test-rules.test.ts checks it); a test that
 * needs the sandbox's time to pass moves its ManualClock with advance() instead.
 */

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err))

export interface EventuallyOptions {
  /** What is waited for, in the failure's message. */
  what: string
  /** How long to keep trying (30 s unless told). */
  timeoutMs?: number
  /** The pause between two tries (50 ms unless told). */
  intervalMs?: number
  /** Asked after each failed try: a text ends the wait at once with that failure (e.g. the process waited on exited). */
  failIf?: () => string | undefined | false | Promise<string | undefined | false>
}

/**
 * Runs `check` until it passes — answers anything but `false` without throwing — and resolves with its answer. After
 * `timeoutMs` it rejects with `what` and the last failure (the thrown error as `cause`).
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { what, timeoutMs = 30_000, intervalMs = 50, failIf }: EventuallyOptions,
): Promise<Exclude<T, false>> {
  const end = Date.now() + timeoutMs
  let tries = 0
  for (;;) {
    let failure: unknown
    try {
      tries++
      const answer = await check()
      if (answer !== false) return answer as Exclude<T, false>
      failure = new Error('the check answered false')
    } catch (err) {
      failure = err
    }
    const stop = await failIf?.()
    if (stop) throw new Error(`${what}: ${stop}; last: ${messageOf(failure)}`, { cause: failure })
    if (Date.now() >= end) {
      throw new Error(`${what}: not within ${timeoutMs} ms (${tries} tries); last: ${messageOf(failure)}`, {
        cause: failure,
      })
    }
    await delay(intervalMs)
  }
}

/**
 * Checks that `check` keeps passing (as in eventually) for `forMs`: the proof that something does NOT happen, e.g.
 * no further attempt after a final one. Rejects with `what` and the failure at the first try that fails.
 */
export async function consistently(
  check: () => unknown,
  { what, forMs, intervalMs = 25 }: { what: string; forMs: number; intervalMs?: number },
): Promise<void> {
  const end = Date.now() + forMs
  for (;;) {
    let failure: unknown
    try {
      if ((await check()) === false) failure = new Error('the check answered false')
    } catch (err) {
      failure = err
    }
    if (failure !== undefined) throw new Error(`${what}: ${messageOf(failure)}`, { cause: failure })
    if (Date.now() >= end) return
    await delay(intervalMs)
  }
}

/** The failure of withDeadline: the operation was not done in time. */
export class DeadlineError extends Error {}

/**
 * Resolves with `promise`'s value, or rejects (DeadlineError) with `what` once `ms` have passed first: the bound on an operation
 * that might hang (a request, a process's exit), never a wait in itself.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what}: not within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/**
 * Stops a child process: `stop()` (e.g. a SIGTERM), then SIGKILL when it has not exited within `graceMs`. Resolves
 * once it has exited.
 */
export async function stopOrKill(
  child: { kill(signal?: NodeJS.Signals): boolean; exitCode: number | null; signalCode: NodeJS.Signals | null },
  exited: Promise<unknown>,
  graceMs: number,
  stop: () => void = () => child.kill('SIGTERM'),
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  stop()
  await withDeadline(exited, graceMs, 'stopped').catch(() => {
    child.kill('SIGKILL')
    return exited
  })
}

/**
 * Runs `fn` after `ms`, unless the answered function is called first: for a peer the test plays that answers late
 * (a slow webhook receiver, a proxy with latency) or for spacing out generated traffic, never for a test to wait.
 */
export function later(ms: number, fn: () => void): () => void {
  const timer = setTimeout(fn, ms)
  return () => clearTimeout(timer)
}

/**
 * Resolves after `ms`: only for pacing what a test does (traffic spread over a rate limit's window, a fault held for
 * a planned time, a job or zone source the test plays that takes a while). Waiting for an outcome goes through
 * eventually(), the event itself or the sandbox clock.
 */
export const pace = (ms: number): Promise<void> => delay(ms)
