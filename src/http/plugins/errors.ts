import fp from 'fastify-plugin'
import FindMyWay from 'find-my-way'
import type { FastifyError, FastifyReply } from 'fastify'
import { ApiError, errors, type FieldError } from '../../errors.js'
import { asArray } from '../route-hooks.js'

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
  const problems = validation.filter((v) => !(v.keyword === 'propertyNames' && validation.some((o) => o !== v && o.propertyName !== undefined)))
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
    if (v.keyword === 'enum' && Array.isArray(v.params.allowedValues)) message = `must be one of ${v.params.allowedValues.join(', ')}`
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
 * One error handler for everything: ApiErrors as they are, validation and parser errors as 400/413,
 * the rest logged with their cause and answered `500 Error`. Also the 404 / wrong-method answer.
 */
export const errorsPlugin = fp(async (app) => {
  // Every route, to tell a wrong method from an unknown path; the router over them is built on the first miss.
  const routes: [string, string][] = []
  let router: ReturnType<typeof FindMyWay> | null = null
  app.addHook('onRoute', (route) => {
    for (const m of asArray(route.method)) routes.push([m, route.url])
    router = null
  })
  const known = () => {
    if (!router) {
      router = FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true })
      for (const [m, url] of routes) if (!router.hasRoute(m as never, url)) router.on(m as never, url, () => undefined)
    }
    return router
  }

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0]
    const otherMethod = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).some((m) => m !== req.method && known().find(m, path) !== null)
    return sendError(reply, otherMethod ? errors.wrongMethod() : errors.endpointNotFound())
  })

  app.setErrorHandler(async (err: FastifyError, req, reply) => {
    let e: ApiError
    if (err instanceof ApiError) e = err
    else if (err.validation) e = validationError(err.validation as AjvError[], err.validationContext)
    else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') e = errors.bodyTooLarge()
    else if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) e = errors.invalidJson()
    else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) e = errors.badRequest(err.message)
    else {
      req.log.error({ err }, 'unhandled error')
      e = errors.internal()
    }
    return sendError(reply, e)
  })
})
