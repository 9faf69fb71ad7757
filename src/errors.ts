/**
 * The one error type of the API. The HTTP status is derived from the kind; the texts live in
 * `errors` below, so a grep here finds every error text the API can return.
 */
export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'internal'
  | 'unavailable'

const statusOf: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
}

export interface FieldError {
  field: string
  message: string
}

export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly fields?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message)
    this.status = statusOf[kind]
  }
}

const bad = (text: string, fields?: FieldError[]) => new ApiError('bad_request', text, fields)

/** Factories for every error of the API, with the specification's own texts. */
export const errors = {
  sslRequired: () => bad('SSL connection is required'),
  wrongMethod: () => bad('Wrong request method'),
  endpointNotFound: () => new ApiError('not_found', 'Endpoint not found'),
  invalidJson: () => bad('Invalid JSON body'),
  validation: (text: string, fields: FieldError[]) => bad(text, fields),
  bodyTooLarge: () => new ApiError('payload_too_large', 'Request body too large'),

  noValidApiKey: () => new ApiError('unauthorized', 'No valid API key set'),
  apiKeyExpired: () => new ApiError('unauthorized', 'API key has expired'),
  ipNotWhitelisted: (ip: string) =>
    new ApiError('unauthorized', `Remote IP address is not found in the API key whitelist (${ip})`),
  accessDenied: () => new ApiError('forbidden', 'Access denied'),
  noAccessToVps: () => bad('No access to this VPS'),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError('rate_limited', 'Rate limit exceeded', undefined, { 'retry-after': String(retryAfterSeconds) }),

  pageOutOfRange: () => bad('Page out of range'),
  idempotencyConflict: () => new ApiError('conflict', 'Idempotency key reused with a different request'),

  badRequest: bad,
  notFound: (text: string) => new ApiError('not_found', text),
  conflict: (text: string) => new ApiError('conflict', text),
  internal: () => new ApiError('internal', 'Error'),
  unavailable: (text: string) => new ApiError('unavailable', text),
}
