import CircuitBreaker from 'opossum'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { lazyRequire } from '../lazy-require.js'

/** ioredis, loaded only when REDIS_URL is set. */
const ioredis = lazyRequire<typeof import('ioredis')>('ioredis')

export interface RedisGuardOptions {
  /** A command not answered within this time counts as failed. */
  timeoutMs: number
  /** How long the breaker stays open before one command tries Redis again. */
  retryMs: number
}

/**
 * The Redis client with short timeouts: no offline queue (a command while disconnected fails at once instead of
 * waiting for the reconnection), no retries per command, a bounded connect time and a reconnection every second at most.
 */
export function openRedis(url: string, opts: RedisGuardOptions, log: Logger): Redis {
  const redis = new (ioredis().Redis)(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    // The breaker gives up after timeoutMs; ioredis drops the command a little later so nothing piles up.
    commandTimeout: Math.max(250, opts.timeoutMs * 4),
    retryStrategy: (times) => Math.min(times * 100, 1000),
  })
  let down = false
  redis.on('error', (err) => {
    if (!down) log.warn({ err: err.message }, 'redis error; shared counters fall back to this instance')
    down = true
  })
  redis.on('ready', () => {
    if (down) log.info('redis is back')
    down = false
  })
  return redis
}

/** Thrown by RedisGuard.run when Redis did not answer (or the breaker is open); callers fall back to memory. */
export class RedisUnavailable extends Error {}
const BREAKER_OPEN = new RedisUnavailable('redis breaker open')

/** Consecutive failed commands that open the breaker at once, whatever the share of failures in the rolling window. */
const CONSECUTIVE_FAILURES = 3

/**
 * A circuit breaker around every Redis command: a command that fails or takes longer than `timeoutMs` counts as a
 * failure; after three failures in a row (or half of the commands of the last seconds) the breaker opens and `run` fails
 * at once (callers use their per-instance fallback) until `retryMs` passed; then one command tries Redis again and
 * closes the breaker on success. A hung Redis thus costs `timeoutMs` to a few requests, not to every request.
 */
export class RedisGuard {
  private readonly breaker: CircuitBreaker<[(redis: Redis) => Promise<unknown>], unknown>
  private failuresInRow = 0

  constructor(
    readonly redis: Redis,
    opts: RedisGuardOptions,
    log: Logger,
  ) {
    this.breaker = new CircuitBreaker((fn: (redis: Redis) => Promise<unknown>) => fn(redis), {
      timeout: opts.timeoutMs,
      resetTimeout: opts.retryMs,
      errorThresholdPercentage: 50,
      volumeThreshold: CONSECUTIVE_FAILURES,
      rollingCountTimeout: 10_000,
      rollingCountBuckets: 10,
      rollingPercentilesEnabled: false,
    })
    this.breaker.on('open', () => log.warn("redis breaker open: shared counters use this instance's memory"))
    this.breaker.on('close', () => log.info('redis breaker closed: shared counters use redis again'))
  }

  /** Runs one Redis operation, or throws RedisUnavailable (failure, timeout, open breaker, not connected). */
  async run<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
    // Open: fail at once without building errors (the breaker's own timer moves it to half-open).
    if (this.breaker.opened) throw BREAKER_OPEN
    try {
      const result = (await this.breaker.fire(fn)) as T
      this.failuresInRow = 0
      return result
    } catch (err) {
      const rejected = (err as { code?: string }).code === 'EOPENBREAKER'
      if (!rejected && ++this.failuresInRow >= CONSECUTIVE_FAILURES && this.breaker.closed) this.breaker.open()
      throw new RedisUnavailable(err instanceof Error ? err.message : String(err))
    }
  }

  /**
   * `ok` when Redis is connected and answers a PING through the breaker in time (when the breaker waits for a trial,
   * this PING is the trial, so an idle instance notices Redis is back too); `degraded` otherwise: counters are per instance.
   */
  async health(): Promise<'ok' | 'degraded'> {
    if (this.redis.status !== 'ready') return 'degraded'
    try {
      await this.run((r) => r.ping())
      return this.breaker.closed ? 'ok' : 'degraded'
    } catch {
      return 'degraded'
    }
  }

  /** What the metrics show: the client connected, the breaker open (or half-open, waiting for its trial command). */
  state(): { connected: boolean; breakerOpen: boolean } {
    return { connected: this.redis.status === 'ready', breakerOpen: !this.breaker.closed }
  }

  /** Resolves once Redis is connected, or after `ms` (the caller goes on degraded then): a start does not wait on Redis. */
  whenReady(ms: number): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.redis.off('ready', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.redis.once('ready', done)
    })
  }

  close(): void {
    this.breaker.shutdown()
  }
}
