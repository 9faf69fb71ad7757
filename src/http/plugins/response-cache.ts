import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { callerIp } from '../caller.js'
import { asArray } from '../route-hooks.js'
import { permitted } from './auth.js'
import { operationOf } from './metrics.js'
import { hasBody } from './transport.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The data version read before a cacheable route's handler ran; its answer is stored under it. */
    cacheVersion: string | null
  }
}

export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * True when a route's cached answer may be sent from its last onRequest hook: nothing of the route itself runs
 * between onRequest and its handler, and its validation reads no header (so it depends on the URL alone). Every
 * other cached route looks its answer up as its first preHandler.
 */
function answersEarly(route: RouteOptions): boolean {
  const schema = route.schema as { headers?: unknown } | undefined
  return (
    schema?.headers === undefined &&
    asArray(route.preParsing).length === 0 &&
    asArray(route.preValidation).length === 0 &&
    asArray(route.preHandler).length === 0
  )
}

/** What answering a route's cached read before routing needs of the route (src/http/early-answers.ts). */
export interface EarlyRoute {
  /** The route's permission area. */
  area: string
  /** What the request is counted under in the metrics (operationOf). */
  operation: string
  /** The version an answer of the route is current at, from the data version; null when nothing is cached now. */
  version(base: string): string | null
  /** False when the answer reads no data (`cache: { data: false }`): no data version is read for it. */
  data: boolean
}

export interface CacheEntry {
  version: string
  /**
   * The answer's bytes (UTF-8), encoded once: Node writes a Buffer to the socket as it is, where a string of the
   * same answer is copied and encoded again on every send (a third of a cached read of a 200-record zone).
   */
  body: Buffer
  /** What the entry holds in memory, roughly: its key and body. */
  size: number
  /** Set when the route's read may be answered before routing: only a GET without a body that Fastify answered. */
  early: EarlyRoute | null
  /** The caller's address the answer names (a route with `byAddress`): served again only to requests from it. */
  address: string | null
}

/**
 * The cached answers, per account, user and URL (per user too: what a sub-user may see, its own tickets, is less than
 * the main user's view of the same URL), within `maxBytes`, the oldest left out first.
 */
export class ResponseCache {
  private readonly entries = new Map<string, CacheEntry>()
  private bytes = 0

  constructor(readonly maxBytes: number) {}

  static keyOf(accountId: number, userId: number, url: string): string {
    return `${accountId} ${userId} ${url}`
  }

  get(key: string): CacheEntry | undefined {
    return this.entries.get(key)
  }

  /** True when `entry` may be served to a caller at `ip`: an answer that names an address goes only to it. */
  static servesTo(entry: CacheEntry, ip: string): boolean {
    return entry.address === null || entry.address === ip
  }

  store(key: string, version: string, text: string, early: EarlyRoute | null, address: string | null): void {
    const { maxBytes, entries } = this
    if (key.length + text.length > maxBytes) return
    const body = Buffer.from(text)
    const old = entries.get(key)
    if (old) {
      this.bytes -= old.size
      entries.delete(key)
    }
    const size = key.length + body.length
    if (size > maxBytes) return
    // Oldest first: a Map iterates in insertion order (an entry served again is not moved; cheaper than a true LRU).
    for (const [k, e] of entries) {
      if (this.bytes + size <= maxBytes) break
      entries.delete(k)
      this.bytes -= e.size
    }
    entries.set(key, { version, body, size, early, address })
    this.bytes += size
  }
}

export const responseCachePlugin = fp(
  async (
    app,
    opts: {
      dataVersion: (() => string) | null
      accountVersion: ((accountId: number) => Promise<string>) | null
      cache: ResponseCache
    },
  ) => {
    const { dataVersion, accountVersion, cache } = opts
    if ((!dataVersion && !accountVersion) || cache.maxBytes <= 0) return
    // Only read without dataVersion, so with accountVersion set.
    const readAccountVersion = (accountId: number): Promise<string> => {
      if (!accountVersion) throw new Error('response cache: neither dataVersion nor accountVersion is set')
      return accountVersion(accountId)
    }
    const keyOf = (req: FastifyRequest) => ResponseCache.keyOf(req.caller.accountId, req.caller.userId, req.url)

    app.decorateRequest('cacheVersion', null)

    app.addHook('onRoute', (route) => {
      const config = route.config?.cache
      if (!config) return
      // The route's own version (of data a driver holds), when it has one, joins the data version; null means no
      // caching this time.
      const own = typeof config === 'object' ? (config.version ?? null) : null
      const byAddress = typeof config === 'object' && config.byAddress === true
      // An answer that reads no data is kept under the route's own version alone.
      const data = typeof config !== 'object' || config.data !== false
      const join = (base: string) => {
        if (!own) return base
        const v = own()
        return v === null ? null : `${base} ${v}`
      }
      // Sent from the cache (and the handler skipped), or the version the answer will be stored under.
      const answer = (req: FastifyRequest, reply: FastifyReply, base: string): boolean => {
        const version = join(base)
        if (version === null) return false
        const hit = cache.get(keyOf(req))
        if (hit && hit.version === version && ResponseCache.servesTo(hit, callerIp(req))) {
          reply.type(JSON_TYPE).send(hit.body)
          return true
        }
        req.cacheVersion = version
        return false
      }
      // A callback, not a promise: on SQLite, and on PostgreSQL when the key lookup read the version, nothing is
      // awaited. A hook that answers does not call `done`.
      const lookup = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
        if (!req.principal) return done()
        // PostgreSQL: read with the key in this request when the key was not cached; that lookup is the round trip.
        const known = !data ? '' : dataVersion ? dataVersion() : req.accountVersion
        if (known !== null) {
          if (!answer(req, reply, known)) done()
          return
        }
        readAccountVersion(req.principal.accountId).then(
          (base) => {
            if (!answer(req, reply, base)) done()
          },
          (err: Error) => done(err),
        )
      }
      // SQLite only: a write during the handler may or may not be in the answer, so that answer is not kept.
      const unchanged = (version: string) => !data || !dataVersion || join(dataVersion()) === version
      const early = answersEarly(route)
      // What answering before routing needs, made at the route's first store; null when its read is not answered
      // there: it has a budget of its own, or no area that needs a key.
      let before: EarlyRoute | null | undefined
      const beforeRouting = (req: FastifyRequest): EarlyRoute | null => {
        if (req.method !== 'GET' || hasBody(req)) return null
        const area = route.config?.area
        if (before === undefined) {
          before =
            early && route.config?.rateLimit === undefined && area !== undefined && area !== 'public'
              ? { area, operation: operationOf(req), version: join, data }
              : null
        }
        return before
      }
      if (early) {
        // Answered at the end of onRequest, after authentication and the rate limit: what the later stages would
        // check gives the same result for every request of this URL, whose answer is kept only after they passed
        // (validation reads the URL only; no body). Refused access goes on to be answered 403 (preParsing).
        route.onRequest = [
          ...asArray(route.onRequest),
          (req, reply, done) => {
            if (hasBody(req) || !permitted(req)) return done()
            lookup(req, reply, done)
          },
        ]
      } else {
        route.preHandler = [lookup, ...asArray(route.preHandler)]
      }
      route.onSend = [
        ...asArray(route.onSend),
        (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
          const version = req.cacheVersion
          if (version !== null && reply.statusCode === 200 && typeof payload === 'string' && unchanged(version)) {
            cache.store(keyOf(req), version, payload, beforeRouting(req), byAddress ? callerIp(req) : null)
          }
          done(null, payload)
        },
      ]
    })
  },
)
