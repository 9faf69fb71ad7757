import { Type, type TSchema } from 'typebox'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { errors, type ApiError } from '../errors.js'
import { ADMIN_PREFIX, API_PREFIX, MAX_PARAM_LENGTH } from './constants.js'
import { ErrorBody } from './schemas.js'
import { asArray } from './route-hooks.js'

/**
 * The error answers every operation declares, in its route schema and so in the OpenAPI documents:
 * one helper for every module, applied to every route of the customer and admin APIs by
 * `declareErrorResponses`. A route adds its own texts with `errorsFor(area, own)` in its `response`;
 * whatever status it leaves out is filled in here.
 */

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 414 | 415 | 429 | 500 | 502 | 503 | 504
export type OwnTexts = Partial<Record<ErrorStatus, string[]>>
/** The errors a route answers besides the common ones, by status: `{ 404: [errors.ticketNotFound()] }`. */
export type OwnErrors = Partial<Record<ErrorStatus, ApiError[]>>

/** An error body as an example in the documents. */
type ErrorExample = { status: number; status_description: string; errors?: { field: string; message: string }[] }

/** Placeholders some texts carry (`<ip>`), shown with a value in examples. */
const exampleText = (text: string) => text.replace('<ip>', '198.51.100.7')

/**
 * An error answer in the OpenAPI documents: the shared error body, described by the texts the route can answer,
 * with one named example per text (and `more`, such as a validation error naming a field of the body).
 */
export const ErrorAnswer = (status: number, texts: string[], note = '', more: ErrorExample[] = []) => {
  const bodies: ErrorExample[] = [...texts.map((t) => ({ status, status_description: exampleText(t) })), ...more]
  const examples = Object.fromEntries(
    bodies.map((body) => [body.status_description, { summary: body.status_description, value: body }]),
  )
  // The content form of a response schema (Fastify serialises with `schema`; the generator keeps `examples`).
  return Type.Unsafe<{ status: number; status_description: string }>({
    description: texts.map((t) => `\`${t}\``).join(', ') + note,
    content: { 'application/json': { schema: { $ref: 'ErrorBody' }, examples } },
  })
}

/** The validation error of a body missing its first required field: what a client sending `{}` gets. */
const missingField = (field: string): ErrorExample => ({
  status: 400,
  status_description: `Missing ${field}`,
  errors: [{ field, message: `must have required property '${field}'` }],
})

const FAULT = ' (sandbox fault injection can answer this status, with the text the fault sets)'
/** The texts of errors, for the answers below: the factories are the one source of every text. */
const textsOf = (...answers: ApiError[]) => answers.map((e) => e.message)

const VALIDATION =
  '; validation errors name the field (`Missing <field>`, `Invalid <field>: …`) and list every problem in `errors`'

/** Marks an answer made by errorsFor with the route's own texts for its status. */
const OWN = Symbol('own error texts')

/** Methods whose body is read: only these can answer 413 and 415. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

interface Shape {
  /** The route's permission area (customer API), for the 403 description. */
  area?: string
  admin?: boolean
  /** The route reads a body. */
  body?: boolean
  /** The route takes an `Idempotency-Key`. */
  idempotent?: boolean
  /** The path names a resource. */
  params?: boolean
  /** The first required field of the route's body, for the example of a validation error. */
  requiredField?: string
}

/** Texts a whole permission area answers besides the common ones (the VPS area refuses a sub-user with a 400). */
const AREA_TEXTS: Record<string, OwnTexts> = {
  vps: { 400: textsOf(errors.noAccessToVps(), errors.noValidVpsId()) },
  domains: { 400: textsOf(errors.noAccessToResource()) },
}

function answers(shape: Shape, own: OwnTexts): Record<ErrorStatus, TSchema> {
  const answer =
    (status: ErrorStatus) =>
    (texts: string[], note = '', more: ErrorExample[] = []) =>
      ErrorAnswer(status, texts, note, more)
  const area = shape.area ?? ''
  const texts = (status: ErrorStatus, base: string[]) => [
    ...new Set([...base, ...(AREA_TEXTS[area]?.[status] ?? []), ...(own[status] ?? [])]),
  ]
  // A sub-user without the route's permission: 403, except in the VPS area (400 `No access to this VPS`).
  const permission = area !== '' && area !== 'any' && area !== 'public' && area !== 'vps'
  const out = {
    400: answer(400)(
      texts(400, [
        ...textsOf(errors.wrongMethod(), errors.sslRequired()),
        ...(shape.body ? textsOf(errors.invalidJson()) : []),
        ...(shape.idempotent ? textsOf(errors.invalidIdempotencyKey()) : []),
      ]),
      VALIDATION,
      shape.requiredField ? [missingField(shape.requiredField)] : [],
    ),
    401: answer(401)(
      texts(
        401,
        shape.admin
          ? textsOf(errors.noValidAdminToken())
          : textsOf(errors.noValidApiKey(), errors.apiKeyExpired(), errors.ipNotWhitelisted('<ip>')),
      ),
    ),
    403: answer(403)(
      texts(403, textsOf(errors.accessDenied())),
      permission ? `: a sub-user without the \`${area}\` permission` : FAULT,
    ),
    404: answer(404)(
      texts(404, own[404] ? [] : textsOf(errors.endpointNotFound())),
      shape.admin
        ? shape.params && !own[404]
          ? ', or the not-found text of the resource named in the path'
          : ''
        : own[404]
          ? '; sandbox fault injection can answer 404 too'
          : shape.params
            ? ' (sandbox fault injection), or the not-found text of the resource named in the path'
            : FAULT,
    ),
    409: answer(409)(
      texts(
        409,
        shape.idempotent
          ? textsOf(errors.idempotencyConflict(), errors.idempotencyInProgress())
          : textsOf(errors.injectedFault(409)),
      ),
      shape.idempotent ? '' : FAULT,
    ),
    413: answer(413)(texts(413, textsOf(errors.bodyTooLarge()))),
    414: answer(414)(
      texts(414, textsOf(errors.pathSegmentTooLong(MAX_PARAM_LENGTH))),
      ' (a domain name with its root dot fits)',
    ),
    415: answer(415)(texts(415, ['Unsupported Content-Encoding: …']), ' (send the body uncompressed)'),
    429: answer(429)(texts(429, textsOf(errors.rateLimited(1)))),
    500: answer(500)(texts(500, textsOf(errors.internal()))),
    502: answer(502)(texts(502, textsOf(errors.injectedFault(502))), FAULT),
    503: answer(503)(
      texts(503, textsOf(errors.injectedFault(503), errors.databaseUnavailable())),
      `${shape.admin ? ': the server is shutting down' : `${FAULT}, or the server is shutting down`}, or the ` +
        'database cannot be reached (a failover; with Retry-After)',
    ),
    504: answer(504)(texts(504, textsOf(errors.injectedFault(504))), FAULT),
  } as Record<ErrorStatus, TSchema>
  const declared = new Set(errorStatuses(shape))
  for (const status of Object.keys(out))
    if (!declared.has(Number(status) as ErrorStatus))
      delete (out as Partial<Record<ErrorStatus, TSchema>>)[Number(status) as ErrorStatus]
  return out
}

/**
 * The error answers of a customer route with its own errors by status, to spread into `response`:
 * `response: { 200: X, ...errorsFor('domains', { 404: [errors.contactNotFound()] }) }`.
 */
export function errorsFor(area: string, ownErrors: OwnErrors = {}): Partial<Record<ErrorStatus, TSchema>> {
  const own: OwnTexts = Object.fromEntries(Object.entries(ownErrors).map(([s, list]) => [s, textsOf(...list)]))
  const all = answers({ area, body: true, params: true }, own)
  // Only the statuses the route names, marked with their own texts: declareErrorResponses renders them
  // again with the route's shape (method, idempotency, paging) and adds the other statuses.
  return Object.fromEntries(
    Object.entries(all)
      .filter(([s]) => own[Number(s) as ErrorStatus])
      .map(([s, answer]) => {
        Object.defineProperty(answer, OWN, { value: own[Number(s) as ErrorStatus], enumerable: false })
        return [s, answer]
      }),
  )
}

/**
 * The error answers of every admin route, to spread into `response`: `response: { 200: X, ...adminErrors }`.
 * declareErrorResponses describes them with the admin texts (inline, the admin document has no components)
 * and adds the other statuses an admin route can answer.
 */
export const adminErrors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody }

/** The extra 400 of paged lists. */
export const PAGED = [errors.pageOutOfRange()]

/**
 * The error statuses a route can answer: the customer API every status sandbox fault injection can set
 * (FAULT_STATUSES) besides its own; the admin API has no permissions, faults or drivers behind it.
 */
function errorStatuses(shape: { admin?: boolean; body?: boolean; params?: boolean }): ErrorStatus[] {
  const body = shape.body ? [413 as const, 415 as const] : []
  const long = shape.params ? [414 as const] : []
  return shape.admin
    ? [400, 401, 404, ...body, ...long, 429, 500, 503]
    : [400, 401, 403, 404, 409, ...body, ...long, 429, 500, 502, 503, 504]
}

/** Every error status a route of `method url` declares, as `declareErrorResponses` declares them. */
export function declaredErrorStatuses(method: string, url: string): ErrorStatus[] {
  return errorStatuses({
    admin: url.startsWith(ADMIN_PREFIX),
    body: BODY_METHODS.has(method),
    params: url.includes(':'),
  })
}

/**
 * Adds to every customer and admin route the error answers it does not declare itself: the ones every
 * route can give (transport, validation, authentication, permission, rate limit, body limit, `500 Error`)
 * and the ones sandbox fault injection can give (404, 409, 502, 503, 504). Register before any plugin
 * that reads route schemas (the OpenAPI generators).
 */
export function declareErrorResponses(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const customer = route.url.startsWith(API_PREFIX)
    const admin = route.url.startsWith(ADMIN_PREFIX)
    const schema = route.schema as { operationId?: string; response?: Record<string, unknown> } | undefined
    if ((!customer && !admin) || !schema?.operationId) return
    const methods = asArray(route.method)
    const shape: Shape = {
      area: route.config?.area,
      admin,
      body: methods.some((m) => BODY_METHODS.has(m)),
      idempotent: route.config?.idempotent === true,
      params: route.url.includes(':'),
      requiredField: (schema as { body?: { required?: string[] } }).body?.required?.[0],
    }
    const paged = 'page' in ((schema as { querystring?: { properties?: object } }).querystring?.properties ?? {})
    const own: OwnTexts = paged ? { 400: textsOf(...PAGED) } : {}
    schema.response ??= {}
    const response = schema.response
    for (const [status, answer] of Object.entries(response)) {
      const texts = (answer as { [OWN]?: string[] })[OWN]
      if (texts)
        own[Number(status) as ErrorStatus] = [...new Set([...(own[Number(status) as ErrorStatus] ?? []), ...texts])]
    }
    const all = answers(shape, own)
    for (const [status, answer] of Object.entries(all)) {
      // The bare ErrorBody some routes declare (the admin ones) is replaced by the described answer.
      const declared = response[status] as { [OWN]?: string[] } | undefined
      if (declared === undefined || declared === ErrorBody || declared[OWN]) response[status] = answer
    }
  })
}
