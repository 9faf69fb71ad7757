import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { asArray } from '../route-hooks.js'
import { permitted } from './auth.js'
import { hasBody } from './transport.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The data version read before a cacheable route's handler ran; its answer is stored under it. */
    cacheVersion: string | null
  }
}

const JSON_TYPE = 'application/json; charset=utf-8'

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

interface Entry {
  version: string
  /**
   * The answer's bytes (UTF-8), encoded once: Node writes a Buffer to the socket as it is, where a string of the
   * same answer is copied and encoded again on every send (a third of a cached read of a 200-record zone).
   */
  body: Buffer
  /** What the entry holds in memory, roughly: its key and body. */
  size: number
}

/**
 * Answers of routes with `config.cache`, kept per account, user and URL together with the data version they
 * were computed at, and served again while the version is unchanged, so an answer is never older than the data.
 * SQLite (`dataVersion`): one version for all data, read without I/O, that changes with every row written by
 * this process and every commit by another; an answer is stored only when the version was the same before the
 * handler ran and after, i.e. no write happened in between. PostgreSQL (`accountVersion`): the account's
 * version, one indexed read per request (or read with the API key when that lookup was not cached), set by the
 * commit of every write to the account's data on any instance; the answer is stored under the reading taken
 * before the handler read anything, so a write committed meanwhile makes the next reading differ. With neither,
 * or with no memory, nothing is registered.
 */
export const responseCachePlugin = fp(
  async (
    app,
    opts: {
      dataVersion: (() => string) | null
      accountVersion: ((accountId: number) => Promise<string>) | null
      maxBytes: number
    },
  ) => {
    const { dataVersion, accountVersion, maxBytes } = opts
    if ((!dataVersion && !accountVersion) || maxBytes <= 0) return
    // Only read without dataVersion, so with accountVersion set.
    const readAccountVersion = (accountId: number): Promise<string> => {
      if (!accountVersion) throw new Error('response cache: neither dataVersion nor accountVersion is set')
      return accountVersion(accountId)
    }
    const entries = new Map<string, Entry>()
    let bytes = 0
    // Per user too: what a sub-user may see (its own tickets) is less than the main user's view of the same URL.
    const keyOf = (req: FastifyRequest) => `${req.caller.accountId} ${req.caller.userId} ${req.url}`

    const store = (key: string, version: string, text: string) => {
      if (key.length + text.length > maxBytes) return
      const body = Buffer.from(text)
      const old = entries.get(key)
      if (old) {
        bytes -= old.size
        entries.delete(key)
      }
      const size = key.length + body.length
      if (size > maxBytes) return
      // Oldest first: a Map iterates in insertion order (an entry served again is not moved; cheaper than a true LRU).
      for (const [k, e] of entries) {
        if (bytes + size <= maxBytes) break
        entries.delete(k)
        bytes -= e.size
      }
      entries.set(key, { version, body, size })
      bytes += size
    }

    app.decorateRequest('cacheVersion', null)

    app.addHook('onRoute', (route) => {
      const cache = route.config?.cache
      if (!cache) return
      // The route's own version (of data a driver holds), when it has one, joins the data version; null means no
      // caching this time.
      const own = typeof cache === 'object' ? cache.version : null
      const join = (base: string) => {
        if (!own) return base
        const v = own()
        return v === null ? null : `${base} ${v}`
      }
      // Sent from the cache (and the handler skipped), or the version the answer will be stored under.
      const answer = (req: FastifyRequest, reply: FastifyReply, base: string): boolean => {
        const version = join(base)
        if (version === null) return false
        const hit = entries.get(keyOf(req))
        if (hit && hit.version === version) {
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
        const known = dataVersion ? dataVersion() : req.accountVersion
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
      const unchanged = (version: string) => !dataVersion || join(dataVersion()) === version
      if (answersEarly(route)) {
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
            store(keyOf(req), version, payload)
          }
          done(null, payload)
        },
      ]
    })
  },
)
