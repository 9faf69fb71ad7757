import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import fp from 'fastify-plugin'
import FindMyWay from 'find-my-way'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, errors, type FieldError } from '../../errors.js'
import { asArray, routeOf } from '../route-hooks.js'
import { MAX_PARAM_LENGTH } from '../constants.js'
import { API_HEADERS } from './transport.js'
import { isDatabaseUnavailable } from '../../db/errors.js'

interface AjvError {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
  /** Set by Ajv on the errors of a `propertyNames` schema: the name that failed. */
  propertyName?: string
}

/** Turns Ajv's errors into the 400 the API answers: the first problem as the text, all of them listed. */
export function validationError(validation: AjvError[], context: string | undefined): ApiError {
  // A failed `propertyNames` comes as the inner error (with `propertyName`) and then a summary: the first is enough.
  const problems = validation.filter(
    (v) => !(v.keyword === 'propertyNames' && validation.some((o) => o !== v && o.propertyName !== undefined)),
  )
  const fields: FieldError[] = problems.map((v) => {
    let field = v.instancePath.replace(/^\//, '').replace(/\//g, '.')
    if (typeof v.propertyName === 'string') {
      const name = v.propertyName.replace(/[^\x20-\x7e]/g, '?').slice(0, 64)
      return { field: field ? `${field}.${name}` : name, message: 'is not a known name' }
    }
    if (v.keyword === 'required' && typeof v.params.missingProperty === 'string') {
      field = field ? `${field}.${v.params.missingProperty}` : v.params.missingProperty
    }
    if (v.keyword === 'additionalProperties' && typeof v.params.additionalProperty === 'string') {
      field = field ? `${field}.${v.params.additionalProperty}` : v.params.additionalProperty
    }
    let message = v.message ?? 'is invalid'
    if (v.keyword === 'enum' && Array.isArray(v.params.allowedValues))
      message = `must be one of ${v.params.allowedValues.join(', ')}`
    return { field: field || (context ?? 'body'), message }
  })
  const first = fields[0]
  const text =
    problems[0]?.keyword === 'required'
      ? `Missing ${first.field}`
      : !first.field || first.field === 'body'
        ? `Invalid ${context === 'body' ? 'request body' : (context ?? 'request')}: ${first.message}`
        : `Invalid ${first.field}: ${first.message}`
  return errors.validation(text, fields)
}

/** Sends an ApiError in the envelope. */
export function sendError(reply: FastifyReply, e: ApiError) {
  if (e.headers) reply.headers(e.headers)
  const body: Record<string, unknown> = { status: e.status, status_description: e.message }
  if (e.fields?.length) body.errors = e.fields
  return reply.code(e.status).type('application/json; charset=utf-8').send(body)
}

/**
 * The answer to what the router refuses before any route or hook runs (Fastify's `frameworkErrors`):
 * a path that does not decode, a path segment longer than MAX_PARAM_LENGTH.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  reply.headers(API_HEADERS)
  reply.header('x-request-id', req.id)
  let e: ApiError
  if (err.code === 'FST_ERR_BAD_URL') e = errors.invalidUrl()
  else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') e = errors.pathSegmentTooLong(MAX_PARAM_LENGTH)
  else {
    req.log.error({ err }, 'router error')
    e = errors.internal()
  }
  return sendError(reply, e)
}

const answered = new WeakSet<Duplex>()

/** The envelope of a request Node's HTTP parser refused: its code, as Node names it, decides the status. */
export function clientErrorOf(err: Error & { code?: string }): ApiError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return errors.headersTooLarge()
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return errors.requestTimeout()
    case 'HPE_INVALID_METHOD':
      return errors.unknownMethod()
    default:
      return errors.malformedRequest()
  }
}

/**
 * The `clientError` handler of every listener (HTTPS, plain HTTP, admin): a request Node's parser refuses
 * (oversized headers, a malformed request line, a timeout) never reaches Fastify, so it is answered here,
 * in the envelope, with `Connection: close`. What the client still sends is read and dropped, so the
 * answer is not lost to a reset; the socket closes once both sides are done (or 10 s after the answer).
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return
  answered.add(socket)
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy()
    return
  }
  answerAndClose(socket, clientErrorOf(err))
}

/** How long a socket answered by answerAndClose is kept to read and drop what the client still sends. */
const LINGER_MS = 10_000

/**
 * Writes `e` in the envelope straight to a socket no HTTP parser answers for, with `Connection: close`; what the
 * client still sends is read and dropped, and the socket closes once both sides are done (or 10 s after the answer).
 */
export function answerAndClose(socket: Duplex, e: ApiError) {
  const body = JSON.stringify({ status: e.status, status_description: e.message })
  const headers: Record<string, string> = {
    ...API_HEADERS,
    'x-request-id': randomUUID(),
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  }
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')
  socket.removeAllListeners('data')
  socket.on('data', () => undefined)
  socket.on('error', () => undefined)
  // A fixed end, not an idle timer: a client trickling bytes after the answer must not keep the socket open.
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref()
  socket.once('close', () => clearTimeout(linger))
  socket.end(`HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? 'Error'}\r\n${head}\r\n${body}`)
}

/**
 * One error handler for everything: ApiErrors as they are, validation and parser errors as 400/413,
 * the rest logged with their cause and answered `500 Error`. Also the 404 / wrong-method answer.
 */
/**
 * The parameter values of pattern `p` for which a request matched to `p` names a path of the more specific
 * pattern `q` (same length, and at their first difference `q` has a fixed segment where `p` has a parameter);
 * null when no path matches both or `p` is the more specific one. The router only falls back to `p` when `q`
 * does not serve the method, so such a request is a wrong method on `q`'s path.
 */
function shadowedBy(p: string, q: string): Record<string, string> | null {
  const ps = p.replace(/\/+$/, '').split('/')
  const qs = q.replace(/\/+$/, '').split('/')
  if (p === q || ps.length !== qs.length || p.includes('*') || q.includes('*')) return null
  const when: Record<string, string> = {}
  let qMoreSpecific = false
  for (let i = 0; i < ps.length; i++) {
    const pParam = ps[i].startsWith(':')
    const qParam = qs[i].startsWith(':')
    if (!pParam && !qParam && ps[i] !== qs[i]) return null
    if (pParam && !qParam) {
      qMoreSpecific = true
      when[ps[i].slice(1)] = qs[i]
    } else if (!pParam && qParam && !qMoreSpecific) return null
  }
  return qMoreSpecific ? when : null
}

export const errorsPlugin = fp(async (app) => {
  // Every route, to tell a wrong method from an unknown path; the router over them is built on the first miss.
  const routes: [string, string][] = []
  let router: ReturnType<typeof FindMyWay> | null = null
  // A parametric route also catches the fixed paths next to it (`GET /domains/order` reaches `/domains/:domain`
  // when `/domains/order` serves POST only): per pattern, the parameter values that name such a fixed path.
  const shadows = new Map<string, Record<string, string>[]>()
  app.addHook('onRoute', (route) => {
    for (const m of asArray(route.method)) routes.push([m, route.url])
    router = null
    if (shadows.has(route.url)) return
    const own: Record<string, string>[] = []
    shadows.set(route.url, own)
    for (const [url, list] of shadows) {
      const mine = shadowedBy(route.url, url)
      if (mine) own.push(mine)
      const theirs = shadowedBy(url, route.url)
      if (theirs) list.push(theirs)
    }
  })
  app.addHook('onReady', async () => {
    for (const [url, list] of shadows) if (list.length === 0) shadows.delete(url)
  })
  // Before authentication and validation, like the wrong-method answer of the not-found handler.
  app.addHook('onRequest', (req, _reply, done) => {
    const shadowed = shadows.get(routeOf(req).url ?? '')
    const params = req.params as Record<string, string>
    if (shadowed?.some((when) => Object.keys(when).every((k) => params[k] === when[k]))) done(errors.wrongMethod())
    else done()
  })
  const known = () => {
    if (!router) {
      router = FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: MAX_PARAM_LENGTH })
      for (const [m, url] of routes) if (!router.hasRoute(m as never, url)) router.on(m as never, url, () => undefined)
    }
    return router
  }

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0]
    const otherMethod = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).some(
      (m) => m !== req.method && known().find(m, path) !== null,
    )
    return sendError(reply, otherMethod ? errors.wrongMethod() : errors.endpointNotFound())
  })

  app.setErrorHandler(async (err: FastifyError, req, reply) => {
    let e: ApiError
    if (err instanceof ApiError) e = err
    else if (err.validation) e = validationError(err.validation as AjvError[], err.validationContext)
    else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') e = errors.bodyTooLarge()
    else if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) e = errors.invalidJson()
    else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500)
      e = errors.fastifyClientError(err.message)
    else if (isDatabaseUnavailable(err)) {
      req.log.warn({ err }, 'database unavailable')
      e = errors.databaseUnavailable()
    } else {
      req.log.error({ err }, 'unhandled error')
      e = errors.internal()
    }
    return sendError(reply, e)
  })
})
