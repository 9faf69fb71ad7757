import ipaddr from 'ipaddr.js'
import { memoized } from '../lib/memo.js'
import { ApiError, errors } from '../errors.js'
import { MemoryWindowCounter, type WindowCounter } from '../db/window-counter.js'

/**
 * Throttling of failed credentials per client address: a wrong, expired, revoked or not whitelisted API key, or a
 * wrong admin token, counts one failure (a request without any credential does not). Once an address has `limit`
 * failures in the window (which opens at its first failure), every request from it that needs a credential is
 * answered 429 `Rate limit exceeded` with `Retry-After` until the window ends, a correct credential included.
 * API keys and admin tokens share one count per address; the count is shared by the instances through Redis.
 * An IPv6 address counts for its whole /64, the block one subscriber usually holds (as one IPv4 address).
 */
export class AuthThrottle {
  private readonly windowMs: number

  constructor(
    private readonly counter: WindowCounter,
    private readonly opts: { limit: number; windowSeconds: number },
  ) {
    this.windowMs = opts.windowSeconds * 1000
  }

  /**
   * True when the address is known, without waiting, not to be throttled: no limit, or counters in this process'
   * memory below it. Null when only `guard` can tell (counters in Redis or in the primary of several workers).
   */
  admitsNow(ip: string): boolean | null {
    if (this.opts.limit === 0) return true
    if (!(this.counter instanceof MemoryWindowCounter)) return null
    return this.counter.peekNow(`af:${addressBlock(ip)}`, this.windowMs).current < this.opts.limit
  }

  /** Runs `authenticate` for a caller at `ip` unless the address is throttled; counts its 401 when a credential was presented. */
  async guard<T>(ip: string, presented: boolean, authenticate: () => Promise<T>): Promise<T> {
    if (this.opts.limit === 0) return authenticate()
    const key = `af:${addressBlock(ip)}`
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

/** The block an address counts for: an IPv4 address itself, an IPv6 address its /64. Kept per address once worked out. */
export const addressBlock = memoized(blockOf, 10_000)

function blockOf(ip: string): string {
  try {
    const addr = ipaddr.parse(ip)
    if (addr.kind() === 'ipv4') return addr.toString()
    const v6 = addr as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString()
    return `${v6.parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`
  } catch {
    return ip
  }
}
