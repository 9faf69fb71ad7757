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
  /** Counts one hit (or `hits`) and returns the window's count. */
  hit(key: string, windowMs: number, hits?: number): Promise<WindowCount>
  /** The window's count, unchanged. */
  peek(key: string, windowMs: number): Promise<WindowCount>
}

const MEMORY_KEYS = 100_000

/** Counters in this instance's memory; at most MEMORY_KEYS keys (closed windows go first, then the oldest). */
export class MemoryWindowCounter implements WindowCounter {
  private readonly windows = new Map<string, { current: number; start: number }>()
  constructor(private readonly clock: Clock) {}

  async hit(key: string, windowMs: number, hits = 1): Promise<WindowCount> {
    return this.hitNow(key, windowMs, hits)
  }

  async peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.peekNow(key, windowMs)
  }

  hitNow(key: string, windowMs: number, hits = 1): WindowCount {
    const now = this.clock.now().getTime()
    const w = this.windows.get(key)
    if (!w || w.start + windowMs <= now || w.start > now) {
      if (!w && this.windows.size >= MEMORY_KEYS) this.evict(now, windowMs)
      this.windows.set(key, { current: hits, start: now })
      return { current: hits, ttl: windowMs }
    }
    w.current += hits
    return { current: w.current, ttl: w.start + windowMs - now }
  }

  peekNow(key: string, windowMs: number): WindowCount {
    const w = this.windows.get(key)
    // The usual case (a key without failures): no window, and no need to read the clock.
    if (!w) return { current: 0, ttl: 0 }
    const now = this.clock.now().getTime()
    if (w.start + windowMs <= now || w.start > now) return { current: 0, ttl: 0 }
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

// KEYS[1] = counter; ARGV = now (ms, app clock), window (ms), hits to count (0 to read).
// The window's start is stored with the count, so the app's clock (not Redis' own) decides when it ends;
// the key also expires in Redis after the window, so nothing stays behind.
const WINDOW_LUA = `
local now = tonumber(ARGV[1])
local win = tonumber(ARGV[2])
local hits = tonumber(ARGV[3])
local v = redis.call('HMGET', KEYS[1], 'c', 's')
local c = tonumber(v[1])
local s = tonumber(v[2])
if not c or not s or s + win <= now or s > now then
  if hits == 0 then return {0, 0} end
  redis.call('HSET', KEYS[1], 'c', hits, 's', now)
  redis.call('PEXPIRE', KEYS[1], win)
  return {hits, win}
end
if hits > 0 then c = redis.call('HINCRBY', KEYS[1], 'c', hits) end
return {c, s + win - now}
`

type WindowRedis = Redis & {
  hostapiWindow(key: string, now: number, windowMs: number, hits: number): Promise<[number, number]>
}

/**
 * Counters shared by every instance through Redis, behind the guard's breaker: while Redis does not answer,
 * each instance counts in its own memory (so limits hold per instance) and goes back to Redis when it answers again.
 * The hits and peeks of one key asked within one event-loop turn go to Redis as one call once the turn is over (at
 * 50 connections a busy key is asked about a dozen times a turn); each caller gets the count its own hit made.
 */
export class RedisWindowCounter implements WindowCounter {
  private readonly redis: WindowRedis
  readonly fallback: MemoryWindowCounter
  private readonly pending = new Map<string, Batch>()
  /** Calls sent to Redis (or to the fallback while it does not answer), one per key and turn. */
  calls = 0

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

  hit(key: string, windowMs: number, hits = 1): Promise<WindowCount> {
    return this.ask(key, windowMs, hits)
  }

  peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.ask(key, windowMs, 0)
  }

  private ask(key: string, windowMs: number, hits: number): Promise<WindowCount> {
    const id = `${windowMs} ${key}`
    let batch = this.pending.get(id)
    if (!batch) {
      batch = { key, windowMs, asks: [] }
      this.pending.set(id, batch)
      if (this.pending.size === 1) setImmediate(() => this.flush())
    }
    const asks = batch.asks
    return new Promise((resolve) => asks.push({ hits, resolve }))
  }

  private flush(): void {
    const batches = [...this.pending.values()]
    this.pending.clear()
    for (const batch of batches) void this.send(batch)
  }

  private async send({ key, windowMs, asks }: Batch): Promise<void> {
    let hits = 0
    for (const a of asks) hits += a.hits
    this.calls++
    let count: WindowCount
    try {
      const now = this.clock.now().getTime()
      const [current, ttl] = await this.guard.run((r) =>
        (r as WindowRedis).hostapiWindow(this.prefix + key, now, windowMs, hits),
      )
      count = { current, ttl }
    } catch {
      count = hits > 0 ? this.fallback.hitNow(key, windowMs, hits) : this.fallback.peekNow(key, windowMs)
    }
    // In the order asked: a hit sees the hits asked up to it, a peek those asked before it.
    let seen = count.current - hits
    for (const ask of asks) {
      seen += ask.hits
      ask.resolve(seen === 0 ? { current: 0, ttl: 0 } : { current: seen, ttl: count.ttl })
    }
  }
}

interface Batch {
  key: string
  windowMs: number
  /** Each ask's hits (0 for a peek). */
  asks: { hits: number; resolve: (count: WindowCount) => void }[]
}
