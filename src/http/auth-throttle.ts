import ipaddr from 'ipaddr.js'
import { memoized } from '../lib/memo.js'
import { ApiError, errors } from '../errors.js'
import { MemoryWindowCounter, type WindowCounter } from '../db/window-counter.js'

/**
 * Throttling of failed credentials per client address: a wrong, expired, revoked or not whitelisted API key, or a
 * wrong admin token, counts one failure (a request without any credential does not). Once an address has `limit`
 * failures in the window (which opens at its first failure), every request from it that needs a credential is
 * answered 429 `Rate limit exceeded` with `Retry-After` until the window ends, a correct credential included.
 * API keys and admin tokens share one count per address; the count is shared by the instances through Redis, and an
 * instance that found an address below the limit lets a cached key from it in without asking for up to RECENT_MS.
 * An IPv6 address counts for its whole /64, the block one subscriber usually holds (as one IPv4 address).
 */
export class AuthThrottle {
  private readonly windowMs: number
  /** The counter when it is this process' memory (read without waiting), else null: decided once. */
  private readonly memory: MemoryWindowCounter | null

  constructor(
    private readonly counter: WindowCounter,
    private readonly opts: { limit: number; windowSeconds: number },
  ) {
    this.windowMs = opts.windowSeconds * 1000
    this.memory = counter instanceof MemoryWindowCounter ? counter : null
  }

  /**
   * Counters in Redis or in the primary: the address blocks whose last check here found them below the limit, with
   * when (`performance.now()`). For RECENT_MS such a block is admitted without asking again; a failure counted here
   * ends that at once, and failures counted by other instances reach it within RECENT_MS.
   */
  private readonly recentlyClear = new Map<string, number>()

  /**
   * True when the address is known, without waiting, not to be throttled: no limit, counters in this process' memory
   * below it, or a check of the shared count within RECENT_MS that found it below. Null when only `guard` can tell.
   */
  admitsNow(ip: string): boolean | null {
    if (this.opts.limit === 0) return true
    const key = `af:${addressBlock(ip)}`
    if (this.memory) return this.memory.peekNow(key, this.windowMs).current < this.opts.limit
    const at = this.recentlyClear.get(key)
    return at !== undefined && performance.now() - at < RECENT_MS ? true : null
  }

  /** Runs `authenticate` for a caller at `ip` unless the address is throttled; counts its 401 when a credential was presented. */
  async guard<T>(ip: string, presented: boolean, authenticate: () => Promise<T>): Promise<T> {
    if (this.opts.limit === 0) return authenticate()
    const key = `af:${addressBlock(ip)}`
    const seen = await this.counter.peek(key, this.windowMs)
    if (seen.current >= this.opts.limit) {
      this.recentlyClear.delete(key)
      throw errors.rateLimited(Math.max(1, Math.ceil(seen.ttl / 1000)))
    }
    this.markClear(key)
    try {
      return await authenticate()
    } catch (err) {
      if (presented && err instanceof ApiError && err.status === 401) {
        this.recentlyClear.delete(key)
        await this.counter.hit(key, this.windowMs)
      }
      throw err
    }
  }

  private markClear(key: string): void {
    if (this.memory) return
    this.recentlyClear.delete(key)
    if (this.recentlyClear.size >= RECENT_KEYS) {
      const oldest = this.recentlyClear.keys().next()
      if (!oldest.done) this.recentlyClear.delete(oldest.value)
    }
    this.recentlyClear.set(key, performance.now())
  }
}

/** How long a shared count found below the limit admits its address block without asking again (ms). */
const RECENT_MS = 1000
/** At most this many address blocks are remembered as recently clear (the oldest goes first). */
const RECENT_KEYS = 10_000

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
