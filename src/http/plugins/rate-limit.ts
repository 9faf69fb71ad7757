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

/**
 * How often a shared budget sends the hits it counted at once (`budget`); for how long the shared count it last heard
 * may decide; how far below its max a key must stay: a tenth of the max, at least LOCAL_HEADROOM requests (so a
 * budget of LOCAL_HEADROOM or less always waits for the shared count).
 */
const SEND_EVERY_MS = 10
const HEARD_FOR_MS = 50
const LOCAL_HEADROOM = 100
/** Keys a shared budget keeps its last count of; past that, closed windows go first, then the oldest. */
const LOCAL_KEYS = 10_000

/** What a shared budget knows of a key: the shared count at its last answer, and the hits counted here since. */
interface Known {
  current: number
  /** When it was heard and when the window ends, on performance.now()'s scale. */
  at: number
  ends: number
  /** Hits admitted here and not yet sent; `sending` of them are on their way. */
  unsent: number
  sending: number
}

/**
 * A budget over `counter`. In memory it counts at once. Shared (Redis, or the primary of `serve --workers N`), a
 * request waits for the shared count, except while the key is well below its max and its shared count was heard
 * within HEARD_FOR_MS: then it is counted against that count plus the hits counted here since, answered at once, and
 * its hit goes to the shared counter with the others of the next SEND_EVERY_MS (whose answer is heard in turn). An
 * instance so admits the hits other instances made within about HEARD_FOR_MS as if they had not been made yet; near
 * the max, or after a pause, every request waits for the exact count again.
 */
export function budget(counter: WindowCounter, max: number, windowMs: number): Budget {
  const memory = counter instanceof MemoryWindowCounter ? counter : null
  const unknown: WindowCount = { current: 0, ttl: 0 }
  if (memory) return { max, hit: (key, then) => then(memory.hitNow(key, windowMs)) }

  const room = max - Math.max(LOCAL_HEADROOM, max / 10)
  const known = new Map<string, Known>()
  let scheduled = false
  const heard = (key: string, count: WindowCount, sent: number) => {
    const k = known.get(key)
    const at = performance.now()
    const ends = at + count.ttl
    if (k) {
      k.current = count.current
      k.at = at
      k.ends = ends
      k.unsent -= sent
      k.sending -= sent
      return
    }
    if (count.ttl <= 0) return
    if (known.size >= LOCAL_KEYS) forget()
    known.set(key, { current: count.current, at, ends, unsent: 0, sending: 0 })
  }
  const forget = () => {
    const now = performance.now()
    for (const [key, k] of known) if (k.ends <= now && k.unsent === 0) known.delete(key)
    let n = Math.ceil(LOCAL_KEYS / 10)
    for (const [key, k] of known) {
      if (known.size < LOCAL_KEYS || n-- <= 0) break
      if (k.unsent === 0) known.delete(key)
    }
  }
  const send = () => {
    scheduled = false
    for (const [key, k] of known) {
      const n = k.unsent - k.sending
      if (n <= 0) continue
      k.sending += n
      counter.hit(key, windowMs, n).then(
        (count) => heard(key, count, n),
        () => {
          k.unsent -= n
          k.sending -= n
        },
      )
    }
  }
  return {
    max,
    hit(key, then) {
      const k = known.get(key)
      const now = performance.now()
      if (k && now - k.at < HEARD_FOR_MS && k.ends - now > HEARD_FOR_MS && k.current + k.unsent + 1 <= room) {
        k.unsent++
        if (!scheduled) {
          scheduled = true
          setTimeout(send, SEND_EVERY_MS).unref()
        }
        return then({ current: k.current + k.unsent, ttl: k.ends - now })
      }
      // The hits counted here and not yet sent go with this one, so the count it gets has them.
      const extra = k ? k.unsent - k.sending : 0
      if (k) k.sending += extra
      counter.hit(key, windowMs, 1 + extra).then(
        (count) => {
          heard(key, count, extra)
          then(count)
        },
        () => {
          if (k) {
            k.unsent -= extra
            k.sending -= extra
          }
          then(unknown)
        },
      )
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
