import type { RouteArea } from '../modules/iam/permissions.js'

/** One row of the route table: what every route declares, read by the permission plugin and the security tests. */
export interface RouteEntry {
  method: string
  url: string
  operationId: string | undefined
  area: RouteArea | undefined
  /** Names the test fixture that makes another account's resource for this route's path parameters. */
  fixture: string | undefined
  /** The route honours `Idempotency-Key` (config.idempotent). */
  idempotent: boolean
  /** The route's answer may be kept by the response cache (config.cache). */
  cache: boolean
  /** The route's schema as registered (params, querystring, body, response by status), for generated tests. */
  schema: RouteSchema | undefined
}

export interface RouteSchema {
  operationId?: string
  params?: unknown
  querystring?: unknown
  body?: unknown
  response?: Record<string, unknown>
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a sub-user needs for this route; every route declares one. */
    area?: RouteArea
    /** See RouteEntry.fixture. */
    fixture?: string
    /**
     * The route orders or charges: an `Idempotency-Key` header makes a repeat with the same body answer
     * the first response again, and a repeat with another body 409.
     */
    idempotent?: boolean
    /**
     * The 200 answer depends only on the database, the caller's account and the URL, so it may be served
     * from the response cache while the data is unchanged (see the response-cache plugin). An answer that
     * also depends on something else (a driver's data) gives its `version` as well: the answer is reused only
     * while that is unchanged too, and never while it is null. An answer that names the caller's address
     * (`byAddress`) is reused only for requests from that address; one that reads no data at all (`data: false`:
     * the key's own facts) is reused without reading the data version.
     */
    cache?: boolean | { version?: () => string | null; byAddress?: true; data?: false }
  }
}
