import type { Redis } from 'ioredis'
import type { Clock } from '../clock.js'
import type { RedisGuard } from './redis.js'

/** A fixed-window count: `current` hits in the window, which ends in `ttl` ms (0 when no window is open). */
export interface WindowCount {
  current: number
  ttl: number
}

/**
 * Fixed-window counters keyed by text, timed by the app's clock: a window opens at the first hit and lasts
 * `windowMs`. Shared through Redis when the instance has one, in memory otherwise.
 */
export interface WindowCounter {
  /** Counts one hit and returns the window's count. */
  hit(key: string, windowMs: number): Promise<WindowCount>
  /** The window's count, unchanged. */
  peek(key: string, windowMs: number): Promise<WindowCount>
}

const MEMORY_KEYS = 100_000

/** Counters in this instance's memory; at most MEMORY_KEYS keys (closed windows go first, then the oldest). */
export class MemoryWindowCounter implements WindowCounter {
  private readonly windows = new Map<string, { current: number; start: number }>()
  constructor(private readonly clock: Clock) {}

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.hitNow(key, windowMs)
  }

  async peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.peekNow(key, windowMs)
  }

  hitNow(key: string, windowMs: number): WindowCount {
    const now = this.clock.now().getTime()
    const w = this.windows.get(key)
    if (!w || w.start + windowMs <= now || w.start > now) {
      if (!w && this.windows.size >= MEMORY_KEYS) this.evict(now, windowMs)
      this.windows.set(key, { current: 1, start: now })
      return { current: 1, ttl: windowMs }
    }
    w.current++
    return { current: w.current, ttl: w.start + windowMs - now }
  }

  peekNow(key: string, windowMs: number): WindowCount {
    const now = this.clock.now().getTime()
    const w = this.windows.get(key)
    if (!w || w.start + windowMs <= now || w.start > now) return { current: 0, ttl: 0 }
    return { current: w.current, ttl: w.start + windowMs - now }
  }

  private evict(now: number, windowMs: number): void {
    for (const [k, w] of this.windows) if (w.start + windowMs <= now) this.windows.delete(k)
    // Still full: drop the oldest tenth (a Map iterates in insertion order).
    if (this.windows.size >= MEMORY_KEYS) {
      let n = Math.ceil(MEMORY_KEYS / 10)
      for (const k of this.windows.keys()) {
        if (n-- <= 0) break
        this.windows.delete(k)
      }
    }
  }
}

// KEYS[1] = counter; ARGV = now (ms, app clock), window (ms), 1 to count a hit or 0 to read.
// The window's start is stored with the count, so the app's clock (not Redis' own) decides when it ends;
// the key also expires in Redis after the window, so nothing stays behind.
const WINDOW_LUA = `
local now = tonumber(ARGV[1])
local win = tonumber(ARGV[2])
local v = redis.call('HMGET', KEYS[1], 'c', 's')
local c = tonumber(v[1])
local s = tonumber(v[2])
if not c or not s or s + win <= now or s > now then
  if ARGV[3] ~= '1' then return {0, 0} end
  redis.call('HSET', KEYS[1], 'c', 1, 's', now)
  redis.call('PEXPIRE', KEYS[1], win)
  return {1, win}
end
if ARGV[3] == '1' then c = redis.call('HINCRBY', KEYS[1], 'c', 1) end
return {c, s + win - now}
`

type WindowRedis = Redis & {
  hostapiWindow(key: string, now: number, windowMs: number, hit: 0 | 1): Promise<[number, number]>
}

/**
 * Counters shared by every instance through Redis, behind the guard's breaker: while Redis does not answer,
 * each instance counts in its own memory (so limits hold per instance) and goes back to Redis when it answers again.
 */
export class RedisWindowCounter implements WindowCounter {
  private readonly redis: WindowRedis
  readonly fallback: MemoryWindowCounter

  constructor(
    private readonly guard: RedisGuard,
    private readonly clock: Clock,
    private readonly prefix: string,
  ) {
    this.redis = guard.redis as WindowRedis
    if (!(this.redis as Partial<WindowRedis>).hostapiWindow)
      this.redis.defineCommand('hostapiWindow', { numberOfKeys: 1, lua: WINDOW_LUA })
    this.fallback = new MemoryWindowCounter(clock)
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.call(key, windowMs, 1)
  }

  peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.call(key, windowMs, 0)
  }

  private async call(key: string, windowMs: number, hit: 0 | 1): Promise<WindowCount> {
    const now = this.clock.now().getTime()
    try {
      const [current, ttl] = await this.guard.run((r) =>
        (r as WindowRedis).hostapiWindow(this.prefix + key, now, windowMs, hit),
      )
      return { current, ttl }
    } catch {
      return hit ? this.fallback.hitNow(key, windowMs) : this.fallback.peekNow(key, windowMs)
    }
  }
}
