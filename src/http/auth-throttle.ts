import { ApiError, errors } from '../errors.js'
import type { WindowCounter } from '../db/window-counter.js'

/**
 * Throttling of failed credentials per client address: a wrong, expired, revoked or not whitelisted API key, or a
 * wrong admin token, counts one failure (a request without any credential does not). Once an address has `limit`
 * failures in the window (which opens at its first failure), every request from it that needs a credential is
 * answered 429 `Rate limit exceeded` with `Retry-After` until the window ends, a correct credential included.
 * API keys and admin tokens share one count per address; the count is shared by the instances through Redis.
 */
export class AuthThrottle {
  private readonly windowMs: number

  constructor(private readonly counter: WindowCounter, private readonly opts: { limit: number; windowSeconds: number }) {
    this.windowMs = opts.windowSeconds * 1000
  }

  /** Runs `authenticate` for a caller at `ip` unless the address is throttled; counts its 401 when a credential was presented. */
  async guard<T>(ip: string, presented: boolean, authenticate: () => Promise<T>): Promise<T> {
    if (this.opts.limit === 0) return authenticate()
    const key = `af:${ip}`
    const seen = await this.counter.peek(key, this.windowMs)
    if (seen.current >= this.opts.limit) throw errors.rateLimited(Math.max(1, Math.ceil(seen.ttl / 1000)))
    try {
      return await authenticate()
    } catch (err) {
      if (presented && err instanceof ApiError && err.status === 401) await this.counter.hit(key, this.windowMs)
      throw err
    }
  }
}
