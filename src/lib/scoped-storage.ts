import { AsyncLocalStorage } from 'node:async_hooks'

/** Every ScopedStorage's open scopes, summed: 0 once no scope runs (tests check that each request's scope ends). */
let openInProcess = 0

/** How many scopes of every ScopedStorage are running now. */
export function openScopes(): number {
  return openInProcess
}

/**
 * A value that follows one call and the asynchronous work it starts (AsyncLocalStorage), with Node's async hooks
 * held on only while scopes run. Node's AsyncLocalStorage turns on a hook on every promise the process creates
 * from its first `run` until `disable()`, which costs every request afterwards, reads included (about 30 µs of a
 * cached read here); this turns it off again once no scope has run for `idleMs`. Not at once: turning the hooks on
 * and off costs more than keeping them on while scopes keep starting (under a load of writes, PATCH served about a
 * fifth fewer requests per second when they went off each time the last open scope ended).
 *
 * After that, work a scope started and that outlives it sees no value until another scope starts, and then may see
 * its own again: a value must carry whether its scope has ended when that matters (a request's pending audit row
 * does).
 */
export class ScopedStorage<T> {
  private readonly storage = new AsyncLocalStorage<T>()
  private open = 0
  /** When the last scope ended (Date.now()), while none runs. */
  private idleSince = 0
  private timer: NodeJS.Timeout | null = null

  /** `idleMs`: how long no scope runs before the hooks go off. */
  constructor(private readonly idleMs = 1000) {}

  /** Runs `fn` with `value` as the store; the scope ends when `fn` returns, or when the promise it returns settles. */
  run<R>(value: T, fn: () => R): R {
    this.open++
    openInProcess++
    let result: R
    try {
      result = this.storage.run(value, fn)
    } catch (err) {
      this.leave()
      throw err
    }
    if (!(result instanceof Promise)) {
      this.leave()
      return result
    }
    return result.finally(() => this.leave()) as R
  }

  /** The value of the scope the caller runs in, if any. */
  getStore(): T | undefined {
    return this.open > 0 ? this.storage.getStore() : undefined
  }

  private leave(): void {
    openInProcess--
    if (--this.open > 0) return
    this.idleSince = Date.now()
    if (!this.timer) this.offAfter(this.idleMs)
  }

  /** Turns the hooks off in `ms` if no scope has run since; one timer at a time, moved on while scopes run. */
  private offAfter(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null
      if (this.open > 0) return
      const left = this.idleSince + this.idleMs - Date.now()
      if (left > 0) this.offAfter(left)
      else this.storage.disable()
    }, ms)
    this.timer.unref()
  }
}
