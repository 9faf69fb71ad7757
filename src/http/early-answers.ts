import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { FastifyInstance } from 'fastify'
import { IamService } from '../modules/iam/iam.service.js'
import type { Metrics } from '../ops/metrics.js'
import type { AuthThrottle } from './auth-throttle.js'
import { presentedKey, writtenIp } from './caller.js'
import { type Budget, perKeyOf, remaining, resetSeconds } from './plugins/rate-limit.js'
import { logRequest } from './plugins/request-log.js'
import { type CacheEntry, JSON_TYPE, ResponseCache } from './plugins/response-cache.js'
import { API_HEADERS, hasBody, requestId } from './plugins/transport.js'

export interface EarlyAnswerOptions {
  cache: ResponseCache
  iam: IamService
  throttle: AuthThrottle
  /** The per-key budget the rate-limit plugin counts in too. */
  perKey: Budget
  metrics: Metrics
  /** The data version (SQLite) or the account's (PostgreSQL), as the response cache reads them. */
  dataVersion: (() => string) | null
  accountVersion: ((accountId: number) => Promise<string>) | null
  /** Whether each answer is logged (HOSTAPI_REQUEST_LOG). */
  requestLog: boolean
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void

const API_HEADER_LIST = Object.entries(API_HEADERS).flat()

/**
 * Answers a cached read before Fastify routes it, when everything its hooks would do is known to give that answer:
 * a GET without a body over TLS, from a key the authentication cache holds at an address the failed-credential
 * throttle admits at once, whose account and user have an answer of that URL stored by a route that may answer
 * early (response-cache.ts: no hook of its own before its handler, no header read, the per-key budget) and whose
 * area the key may use, with the data version unchanged and the per-key budget not spent. The answer carries the
 * headers Fastify's would, is counted in the metrics and the request log like any other, and counts against the
 * same budget. Anything else, or any doubt on the way (a version that moved, a spent budget, a failed reading), goes
 * to Fastify, which answers it from the start: nothing is sent or kept before that. Not installed in sandbox mode
 * (every request is journalled and may meet a fault), behind trusted proxies (the caller's address and scheme
 * come from their headers) nor without a response cache (HOSTAPI_RESPONSE_CACHE_MB=0).
 *
 * It saves a cached read Fastify's request and reply objects, its router and hook runners (docs/benchmarks.md).
 */
export function answerCachedReadsEarly(app: FastifyInstance, opts: EarlyAnswerOptions): void {
  const { cache, iam, throttle, perKey, metrics, dataVersion, accountVersion } = opts
  const log = app.ctx.log
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })

  const server = app.server
  const listeners = server.listeners('request') as Handler[]
  if (listeners.length !== 1)
    throw new Error(`early answers: expected Fastify's one request listener, found ${listeners.length}`)
  const [fastify] = listeners
  const pass: Handler = (req, res) => fastify.call(server, req, res)

  /**
   * Sends the answer kept under `key` when it is still the answer at `base`, for a caller at `ip`, and the budget
   * allows; otherwise Fastify answers.
   */
  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    key: string,
    keyId: string,
    ip: string,
    base: string,
    start: number,
  ): void => {
    const entry = cache.get(key)
    const route = entry?.early
    const current = entry && route && route.version(base) === entry.version
    if (!current || !ResponseCache.servesTo(entry, ip)) {
      pass(req, res)
      return
    }
    perKey.hit(keyId, (count) => {
      if (count.current > perKey.max) {
        pass(req, res)
        return
      }
      const id = requestId(req.headers['x-request-id'])
      write(res, entry, id, remaining(perKey, count), resetSeconds(count))
      const elapsed = performance.now() - start
      metrics.observeEarly(route.operation, elapsed / 1000)
      if (opts.requestLog && log.isLevelEnabled('info')) {
        logRequest(log, { id, method: 'GET', url: req.url ?? '', status: 200, elapsed, operation: route.operation })
      }
    })
  }

  const write = (res: ServerResponse, entry: CacheEntry, id: string, left: number, reset: number) => {
    // The headers of Fastify's answer, in its order: the transport's, the request id, the budget's, the body's.
    res.writeHead(200, [
      ...API_HEADER_LIST,
      'x-request-id',
      id,
      'ratelimit-limit',
      String(perKey.max),
      'ratelimit-remaining',
      String(left),
      'ratelimit-reset',
      String(reset),
      'content-type',
      JSON_TYPE,
      'content-length',
      String(entry.body.length),
    ])
    res.end(entry.body)
  }

  /** True when it took the request (answered or handed on to Fastify later); false: Fastify answers it now. */
  const answer = (req: IncomingMessage, res: ServerResponse): boolean => {
    const start = performance.now()
    const url = req.url
    if (req.method !== 'GET' || closing || url === undefined || hasBody(req) || url.includes('%00')) return false
    if ((req.socket as TLSSocket).encrypted !== true) return false
    const key = presentedKey(req)
    if (!key) return false
    const ip = writtenIp(req.socket.remoteAddress ?? '')
    const who = throttle.admitsNow(ip) === true ? iam.cachedPrincipal(key, ip) : null
    if (!who) return false
    const cacheKey = ResponseCache.keyOf(who.accountId, who.userId, url)
    const early = cache.get(cacheKey)?.early
    if (!early || (early.area !== 'any' && !IamService.allows(who, early.area))) return false
    if (!early.data) {
      send(req, res, cacheKey, perKeyOf(who), ip, '', start)
      return true
    }
    if (dataVersion) {
      send(req, res, cacheKey, perKeyOf(who), ip, dataVersion(), start)
      return true
    }
    if (!accountVersion) return false
    accountVersion(who.accountId).then(
      (base) => send(req, res, cacheKey, perKeyOf(who), ip, base, start),
      () => pass(req, res),
    )
    return true
  }

  server.removeAllListeners('request')
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!answer(req, res)) pass(req, res)
  })
}
