import fp from 'fastify-plugin'
import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import { errors } from '../../errors.js'
import { MemoryWindowCounter, type WindowCount, type WindowCounter } from '../../db/window-counter.js'
import { callerIp } from '../caller.js'

type Done = (err: Error | null, res?: WindowCount) => void

/**
 * A store for @fastify/rate-limit over the app's window counters (Redis behind its breaker, or memory), timed by
 * the app's clock. A route with its own budget gets a child store with its own keys.
 */
export function counterStore(counter: WindowCounter, prefix: string): FastifyRateLimitStoreCtor {
  class CounterStore implements FastifyRateLimitStore {
    constructor(
      _params: unknown,
      private readonly keyPrefix = prefix,
    ) {}
    incr(key: string, done: Done, timeWindow: number): void {
      // In memory the count is known at once: no promise to wait a turn for.
      if (counter instanceof MemoryWindowCounter) {
        done(null, counter.hitNow(this.keyPrefix + key, timeWindow))
        return
      }
      counter.hit(this.keyPrefix + key, timeWindow).then(
        (res) => done(null, res),
        (err: Error) => done(err),
      )
    }
    read(key: string, done: Done, timeWindow: number): void {
      counter.peek(this.keyPrefix + key, timeWindow).then(
        (res) => done(null, res),
        (err: Error) => done(err),
      )
    }
    // The plugin passes the route's merged options, with the route under `routeInfo`.
    child(routeOptions: object): CounterStore {
      const route = (routeOptions as { routeInfo: { method?: string; url?: string } }).routeInfo
      return new CounterStore(routeOptions, `${this.keyPrefix}${route.method}${route.url}-`)
    }
  }
  return CounterStore
}

/**
 * Per-key request budget (per minute) with `RateLimit-*` headers on every answer and `Retry-After` on 429.
 * Counters live in memory, or in Redis when several instances share one budget (per instance while Redis is down).
 * A route may set its own budget in `config.rateLimit` (availability checks do).
 */
export const rateLimitPlugin = fp(async (app, opts: { perKeyPerMinute: number; counter: WindowCounter }) => {
  await app.register(rateLimit, {
    global: true,
    max: opts.perKeyPerMinute,
    timeWindow: 60_000,
    hook: 'onRequest',
    enableDraftSpec: true,
    store: counterStore(opts.counter, 'rl:'),
    skipOnError: true,
    keyGenerator: (req) => (req.principal ? `key:${req.principal.keyId}` : `ip:${callerIp(req)}`),
    errorResponseBuilder: (_req, context) => errors.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000))),
  })
})
