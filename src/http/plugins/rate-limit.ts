import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { errors } from '../../errors.js'
import { MemoryWindowCounter, type WindowCount, type WindowCounter } from '../../db/window-counter.js'
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
export const rateLimitPlugin = fp(async (app, opts: { perKeyPerMinute: number; counter: WindowCounter }) => {
  const { counter } = opts
  const memory = counter instanceof MemoryWindowCounter ? counter : null

  const limiter = (max: number, windowMs: number, keyOf: (req: FastifyRequest) => string): onRequestHookHandler => {
    const answer = (reply: FastifyReply, count: WindowCount, done: (err?: Error) => void) => {
      const reset = Math.ceil(count.ttl / 1000)
      reply.header('ratelimit-limit', max)
      if (count.current > max) {
        reply.header('ratelimit-remaining', 0)
        reply.header('ratelimit-reset', reset)
        done(errors.rateLimited(Math.max(1, reset)))
        return
      }
      reply.header('ratelimit-remaining', max - count.current)
      reply.header('ratelimit-reset', reset)
      done()
    }
    return (req, reply, done) => {
      const key = keyOf(req)
      if (memory) {
        answer(reply, memory.hitNow(key, windowMs), done)
        return
      }
      // Redis behind its breaker: a count that fails lets the request through, as with no limit.
      counter.hit(key, windowMs).then(
        (count) => answer(reply, count, done),
        () => answer(reply, { current: 0, ttl: 0 }, done),
      )
    }
  }

  const perKey = limiter(opts.perKeyPerMinute, MINUTE_MS, (req) =>
    req.principal ? `rl:key:${req.principal.keyId}` : `rl:ip:${callerIp(req)}`,
  )
  app.addHook('onRoute', (route) => {
    const own = route.config?.rateLimit
    if (own === false) return
    const hook = own
      ? limiter(own.max, own.timeWindow, (req) => `rl:${route.method}${route.url}-${own.keyGenerator(req)}`)
      : perKey
    route.onRequest = [...asArray(route.onRequest), hook]
  })
})
