import fp from 'fastify-plugin'
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import { errors } from '../../errors.js'
import { MemoryWindowCounter, type WindowCount, type WindowCounter } from '../../db/window-counter.js'
import type { Principal } from '../../modules/iam/iam.service.js'
import { callerIp } from '../caller.js'
import { asArray } from '../route-hooks.js'

/** A route's own budget, counted apart from the per-key one (availability checks have one). */
export interface RouteRateLimit {
  max: number
  timeWindow: number
  /** What the route counts by; the per-key budget counts by API key (by address before authentication). */
  keyGenerator: (req: FastifyRequest) => string
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's own budget instead of the per-key one, or `false` for none (health checks, the admin API). */
    rateLimit?: RouteRateLimit | false
  }
}

const MINUTE_MS = 60_000

/** A number of requests per window, counted per key. */
export interface Budget {
  max: number
  /**
   * Counts one request under `key` and calls `then` with the window's count: at once in memory, when Redis answers
   * otherwise (a count Redis cannot give is 0: the request goes through, as with no limit).
   */
  hit(key: string, then: (count: WindowCount) => void): void
}

export function budget(counter: WindowCounter, max: number, windowMs: number): Budget {
  const memory = counter instanceof MemoryWindowCounter ? counter : null
  const unknown: WindowCount = { current: 0, ttl: 0 }
  return {
    max,
    hit(key, then) {
      if (memory) return then(memory.hitNow(key, windowMs))
      counter.hit(key, windowMs).then(then, () => then(unknown))
    },
  }
}

/** The per-key budget (HOSTAPI_RATE_LIMIT a minute); `keyOf` is its key for a caller. */
export const perKeyBudget = (counter: WindowCounter, perMinute: number): Budget => budget(counter, perMinute, MINUTE_MS)

/** The key an authenticated caller's requests count under in the per-key budget. */
export const perKeyOf = (who: Principal): string => `rl:key:${who.keyId}`

/** What a budget's headers say of `count`: the seconds until its window resets, the requests left in it. */
export const resetSeconds = (count: WindowCount): number => Math.ceil(count.ttl / 1000)
export const remaining = (b: Budget, count: WindowCount): number => (count.current > b.max ? 0 : b.max - count.current)

/**
 * Per-key request budget (per minute) with `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` on every
 * answer and `Retry-After` on 429. Counters live in memory, or in Redis when several instances share one budget (per
 * instance while Redis is down); a count that cannot be had lets the request through. A route may set its own budget
 * in `config.rateLimit`, counted under keys of its own.
 *
 * One onRequest hook per route, after authentication. In memory it counts and answers at once, without a promise
 * (@fastify/rate-limit, which this replaces, made eight promises on every request: `test/cached-read-path.test.ts`;
 * docs/benchmarks.md). Keys are those that library wrote (`rl:key:<id>`, `rl:<METHOD><url>-<key>` for a route's own
 * budget), so instances of either kind count together in one Redis.
 */
export const rateLimitPlugin = fp(async (app, opts: { perKey: Budget; counter: WindowCounter }) => {
  const limiter = (b: Budget, keyOf: (req: FastifyRequest) => string): onRequestHookHandler => {
    return (req, reply, done) => {
      b.hit(keyOf(req), (count) => {
        const reset = resetSeconds(count)
        reply.header('ratelimit-limit', b.max)
        reply.header('ratelimit-remaining', remaining(b, count))
        reply.header('ratelimit-reset', reset)
        done(count.current > b.max ? errors.rateLimited(Math.max(1, reset)) : undefined)
      })
    }
  }

  const perKey = limiter(opts.perKey, (req) => (req.principal ? perKeyOf(req.principal) : `rl:ip:${callerIp(req)}`))
  app.addHook('onRoute', (route) => {
    const own = route.config?.rateLimit
    if (own === false) return
    const hook = own
      ? limiter(
          budget(opts.counter, own.max, own.timeWindow),
          (req) => `rl:${route.method}${route.url}-${own.keyGenerator(req)}`,
        )
      : perKey
    route.onRequest = [...asArray(route.onRequest), hook]
  })
})
