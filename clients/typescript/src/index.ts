import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, mergeHeaders } from 'openapi-fetch'
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers'
import type { paths as adminPaths } from './admin-schema.js'
import { fetchTrusting } from './https-fetch.js'
import type { paths } from './schema.js'

export type { components, operations, paths } from './schema.js'
export type {
  components as adminComponents,
  operations as adminOperations,
  paths as adminPaths,
} from './admin-schema.js'
export { fetchTrusting } from './https-fetch.js'

/** Options of both clients. */
export interface ClientOptions {
  /**
   * CA certificates (PEM text) to verify the server's certificate against, instead of the system's: the local
   * root hostapi generates (`npx hostapi cert` prints its path). Node only; ignored when `fetch` is given.
   */
  ca?: string | string[]
  /** The fetch to use (default `globalThis.fetch`, or one trusting `ca`). */
  fetch?: (request: Request) => Promise<Response>
  /** How many times a call answered 429 is sent again (default 2). */
  retries?: number
  /** The longest wait before sending again, in seconds, whatever `Retry-After` asks for (default 60). */
  maxRetryWait?: number
  /** How the client waits between attempts (default a timer). */
  sleep?: (ms: number) => Promise<void>
}

/** Options of createHostapiClient. */
export interface HostapiClientOptions extends ClientOptions {
  /** Origin of the API, e.g. `https://api.example.com`; the paths carry the `/api/v2` prefix. */
  baseUrl: string
  /** Sent as the `API-Key` header on every call. */
  apiKey: string
}

/** Options of createHostapiAdminClient. */
export interface HostapiAdminClientOptions extends ClientOptions {
  /** Origin of the admin API, e.g. `https://localhost:8443`; the paths are under `/admin/v1`, which is added. */
  baseUrl: string
  /** An admin token (`npx hostapi admin token create`, or HOSTAPI_ADMIN_TOKEN), sent as `Authorization: Bearer`. */
  token: string
}

/** Options of one call besides openapi-fetch's own. */
export interface CallOptions {
  /** Sent as `Idempotency-Key`: an order repeated with the same key answers as the first one did. */
  idempotencyKey?: string
  /** Adds `?test=1`: the call is validated and answered as usual, but nothing is changed (dry run). */
  test?: boolean
}

/** A non-2xx answer: the HTTP status and the envelope's `status_description`. */
export class HostapiError extends Error {
  /** The answer's body: the envelope `{ status, status_description }` for every error hostapi sends. */
  readonly body: unknown
  constructor(
    readonly status: number,
    readonly status_description: string,
    body: unknown,
    readonly response: Response,
  ) {
    super(`${status} ${status_description}`)
    this.name = 'HostapiError'
    this.body = body
  }
}

type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & CallOptions)?] : [Init & CallOptions]

/** A successful answer: non-2xx answers are thrown as HostapiError instead. */
export type HostapiAnswer<R> = {
  data: Exclude<R extends { data?: infer D } ? D : never, undefined>
  response: Response
}

// A path's entry for a method it does not serve is `never`/undefined; the ones callable are objects.
type Operation<T> = T extends Record<string | number, unknown> ? T : never

// biome-ignore lint/suspicious/noExplicitAny: the shape openapi-fetch's own `paths` parameter has
type AnyPaths = Record<string, any>

/** One HTTP method of a client over `Paths`: typed path, parameters, body and answer. */
export type TypedMethod<Paths extends AnyPaths, M extends HttpMethod> = <
  Path extends PathsWithMethod<Paths, M>,
  Init extends MaybeOptionalInit<Paths[Path], M>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<HostapiAnswer<FetchResponse<Operation<Paths[Path][M]>, Init, MediaType>>>

/** A typed client over the paths of one OpenAPI document. */
export interface TypedClient<Paths extends AnyPaths> {
  GET: TypedMethod<Paths, 'get'>
  POST: TypedMethod<Paths, 'post'>
  PUT: TypedMethod<Paths, 'put'>
  PATCH: TypedMethod<Paths, 'patch'>
  DELETE: TypedMethod<Paths, 'delete'>
  /** The underlying openapi-fetch client: same credentials and retries, errors returned rather than thrown. */
  raw: Client<Paths>
}

/** One HTTP method of the customer client. */
export type HostapiMethod<M extends HttpMethod> = TypedMethod<paths, M>
/** The typed client returned by createHostapiClient (the customer API, `/api/v2`). */
export type HostapiClient = TypedClient<paths>
/** The typed client returned by createHostapiAdminClient (the admin API and the sandbox controls, `/admin/v1`). */
export type HostapiAdminClient = TypedClient<adminPaths>

const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Milliseconds to wait for a `Retry-After` value (seconds or an HTTP date), within 0…`maxSeconds`. */
export function retryDelayMs(retryAfter: string | null, maxSeconds: number, now = Date.now()): number {
  let seconds = 1
  if (retryAfter !== null && /^\s*\d+\s*$/.test(retryAfter)) seconds = Number(retryAfter)
  else if (retryAfter !== null && !Number.isNaN(Date.parse(retryAfter))) seconds = (Date.parse(retryAfter) - now) / 1000
  return Math.round(Math.min(Math.max(seconds, 0), maxSeconds) * 1000)
}

function retrying(
  fetchFn: (request: Request) => Promise<Response>,
  retries: number,
  maxWait: number,
  sleep: (ms: number) => Promise<void>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      // A body can be sent once: every attempt but the last sends a copy.
      const response = await fetchFn(attempt < retries ? request.clone() : request)
      if (response.status !== 429 || attempt >= retries) return response
      await response.body?.cancel()
      await sleep(retryDelayMs(response.headers.get('retry-after'), maxWait))
    }
  }
}

function toError(answer: { error?: unknown; response: Response }): HostapiError {
  const { error, response } = answer
  const envelope = error as { status_description?: unknown } | undefined
  const text =
    typeof envelope?.status_description === 'string'
      ? envelope.status_description
      : typeof error === 'string' && error
        ? error
        : response.statusText || `HTTP ${response.status}`
  return new HostapiError(response.status, text, error, response)
}

type LooseInit = CallOptions & {
  headers?: Parameters<typeof mergeHeaders>[0]
  params?: { query?: Record<string, unknown> } & Record<string, unknown>
} & Record<string, unknown>
type LooseRequest = (
  method: string,
  url: string,
  init: Record<string, unknown>,
) => Promise<{ error?: unknown; response: Response }>

/**
 * A typed client for hostapi: paths, bodies and answers come from the committed `openapi.json`. Sends `API-Key`,
 * sends a call answered 429 again after `Retry-After`, and throws HostapiError for every non-2xx answer.
 */
export function createHostapiClient(options: HostapiClientOptions): HostapiClient {
  return typedClient<paths>(options.baseUrl.replace(/\/+$/, ''), { 'API-Key': options.apiKey }, options)
}

/**
 * A typed client for hostapi's admin API (accounts, keys, jobs, and in sandbox mode the sandbox controls: reset,
 * clock, faults, journal), typed from the committed `openapi-admin.json`; paths as that document writes them
 * (`/sandbox/reset`), under `/admin/v1`. Same retries and errors as createHostapiClient.
 */
export function createHostapiAdminClient(options: HostapiAdminClientOptions): HostapiAdminClient {
  const baseUrl = `${options.baseUrl.replace(/\/+$/, '')}/admin/v1`
  return typedClient<adminPaths>(baseUrl, { Authorization: `Bearer ${options.token}` }, options)
}

function typedClient<Paths extends AnyPaths>(
  baseUrl: string,
  headers: Record<string, string>,
  options: ClientOptions,
): TypedClient<Paths> {
  const fetchFn =
    options.fetch ??
    (options.ca !== undefined ? fetchTrusting(options.ca) : (request: Request) => globalThis.fetch(request))
  const raw = createClient<Paths>({
    baseUrl,
    headers,
    fetch: retrying(fetchFn, options.retries ?? 2, options.maxRetryWait ?? 60, options.sleep ?? timer),
  })
  const request = raw.request as unknown as LooseRequest
  const method =
    (name: string) =>
    async (url: string, init: LooseInit = {}) => {
      const { idempotencyKey, test, ...rest } = init
      const sent: Record<string, unknown> = { ...rest }
      if (idempotencyKey !== undefined) sent.headers = mergeHeaders(rest.headers, { 'Idempotency-Key': idempotencyKey })
      if (test) sent.params = { ...rest.params, query: { ...rest.params?.query, test: 1 } }
      const answer = await request(name, url, sent)
      if (answer.error !== undefined || !answer.response.ok) throw toError(answer)
      return answer
    }
  return {
    GET: method('get') as unknown as TypedMethod<Paths, 'get'>,
    POST: method('post') as unknown as TypedMethod<Paths, 'post'>,
    PUT: method('put') as unknown as TypedMethod<Paths, 'put'>,
    PATCH: method('patch') as unknown as TypedMethod<Paths, 'patch'>,
    DELETE: method('delete') as unknown as TypedMethod<Paths, 'delete'>,
    raw,
  }
}
