import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../errors.js'
import { type JsonLimits, LARGE_BODY_MAX_VALUES, parseJsonBody } from '../../lib/json-body.js'
import { routeOf } from '../route-hooks.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Answered over plain HTTP as well, from any address: the health checks (`/healthz`, `/readyz`) that a load
     * balancer makes on the plain-HTTP listener. Every other route needs TLS or a trusted proxy that says https.
     */
    plainHttp?: true
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A usable request id: the caller's `X-Request-Id` when it is sane, otherwise a new UUID. */
export function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID()
}

const SECURITY_HEADERS: Record<string, string> = {
  'strict-transport-security': 'max-age=31536000',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
}
const DOCS_HEADERS = SECURITY_HEADERS
export const API_HEADERS: Record<string, string> = {
  ...SECURITY_HEADERS,
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
}

/** True when the request declares a body (a length, even 0, or a transfer encoding). */
export const hasBody = (req: { headers: IncomingHttpHeaders }): boolean =>
  req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined

export interface TransportOptions {
  bodyLimit: number
  /** HOSTAPI_JSON_MAX_DEPTH: a body nested deeper is refused 400 before it is parsed. */
  jsonMaxDepth: number
  /** HOSTAPI_JSON_MAX_VALUES: a body holding more values is refused 413 before it is parsed. */
  jsonMaxValues: number
  /**
   * Parses a body of more than `largeBody` characters off the event loop (a worker thread), so that one tenant's
   * 10 MB zone import does not hold every other request while JSON.parse runs; smaller bodies parse inline. The
   * parse applies the limits given to it (the depth, and LARGE_BODY_MAX_VALUES so its result comes back cheaply).
   */
  parseLarge?: { largeBody: number; parse(req: FastifyRequest, text: string, limits: JsonLimits): Promise<unknown> }
}

/**
 * The transport rules of every request: TLS required (or a trusted proxy that says https; the health checks excepted), the request
 * id echoed, security headers, and JSON bodies parsed whatever their Content-Type (DELETE included).
 */
export const transportPlugin = fp(async (app, opts: TransportOptions) => {
  // While the server shuts down, requests still arriving on open connections get a 503 in the envelope
  // (Fastify's own return503OnClosing answer is not the envelope; it is off, see app.ts).
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  const checkTransport = (req: FastifyRequest, reply: FastifyReply) => {
    reply.headers(req.url.startsWith('/docs') ? DOCS_HEADERS : API_HEADERS)
    reply.header('x-request-id', req.id)
    if (closing) {
      reply.header('connection', 'close')
      throw errors.shuttingDown()
    }
    // request.protocol believes X-Forwarded-Proto only from HOSTAPI_TRUSTED_PROXIES.
    if (req.protocol !== 'https' && routeOf(req).config?.plainHttp !== true) throw errors.sslRequired()
    // No text the API keeps or looks up holds NUL (PostgreSQL cannot store it): refused at the door.
    if (req.url.includes('%00')) throw errors.nulInUrl()
    // Fastify parses a DELETE body only when it has a Content-Type; clients send DELETE bodies without one.
    const h = req.raw.headers
    const withBody = hasBody(req)
    if (h['content-type'] === undefined && withBody) {
      h['content-type'] = 'application/json'
    }
    // Bodies are read as they are: a compressed one would only fail as `Invalid JSON body`.
    const encoding = h['content-encoding']?.trim().toLowerCase()
    if (withBody && encoding && encoding !== 'identity') throw errors.unsupportedEncoding(encoding)
  }
  // Synchronous (a callback, not a promise): it runs on every request and waits for nothing.
  app.addHook('onRequest', (req, reply, done) => {
    try {
      checkTransport(req, reply)
    } catch (err) {
      done(err as Error)
      return
    }
    done()
  })

  app.removeAllContentTypeParsers()
  const large = opts.parseLarge
  const limits: JsonLimits = { maxDepth: opts.jsonMaxDepth, maxValues: opts.jsonMaxValues }
  const largeLimits: JsonLimits = { maxDepth: opts.jsonMaxDepth, maxValues: LARGE_BODY_MAX_VALUES }
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: opts.bodyLimit }, (req, body, done) => {
    const text = body as string
    if (large && text.length > large.largeBody) {
      large.parse(req, text, largeLimits).then(
        (parsed) => done(null, parsed),
        (err: Error) => done(err, undefined),
      )
      return
    }
    try {
      done(null, parseJsonBody(text, limits))
    } catch (err) {
      done(err as Error, undefined)
    }
  })
})
