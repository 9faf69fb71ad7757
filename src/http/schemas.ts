import { Type, type TSchema } from 'typebox'
import { errors } from '../errors.js'

/** Shared schemas of the API: the envelope, the error body and pagination. */

export const ErrorBody = Type.Object(
  {
    status: Type.Integer({ description: 'The HTTP status code, as an integer' }),
    status_description: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { $id: 'ErrorBody', description: 'Every error response' },
)

/** `{status, status_description, data}` around `data`. */
export const Envelope = <T extends TSchema>(data: T, example?: unknown) =>
  Type.Object(
    {
      status: Type.Integer({ examples: [200] }),
      status_description: Type.String({ examples: ['Request successful'] }),
      data,
    },
    example === undefined ? {} : { examples: [{ status: 200, status_description: 'Request successful', data: example }] },
  )

/** An envelope without `data`, for mutations that only report success. */
export const OkMessage = Type.Object({
  status: Type.Integer({ examples: [200] }),
  status_description: Type.String({ examples: ['Request successful'] }),
})

export const Pagination = Type.Object(
  { page: Type.Integer(), limit: Type.Integer(), total: Type.Integer(), total_pages: Type.Integer() },
  { $id: 'Pagination' },
)

export const DEFAULT_LIMIT = 25
export const MAX_LIMIT = 100
/**
 * The highest page any list can have: no list holds 2^31 items. A page above it answers `Page out of range`
 * before any query, so no offset reaches the database that SQLite or PostgreSQL would refuse.
 */
export const MAX_PAGE = 2 ** 31 - 1

/** `page`, `limit`, `search` of every paged list. */
export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, from 1' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Items per page, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })),
  search: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive substring' })),
}

export interface Page {
  page: number
  limit: number
  offset: number
}

/**
 * The page asked for, with defaults. The route schema has checked `page` and `limit` already (integers,
 * `limit` 1–100); checked again here, so no caller can hand the database an offset it refuses.
 */
export function pageOf(query: { page?: number; limit?: number }): Page {
  const page = query.page ?? 1
  const limit = query.limit ?? DEFAULT_LIMIT
  if (typeof page !== 'number' || !Number.isInteger(page) || page < 1) throw errors.validation('Invalid page: must be an integer >= 1', [{ field: 'page', message: 'must be an integer >= 1' }])
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw errors.validation(`Invalid limit: must be an integer from 1 to ${MAX_LIMIT}`, [{ field: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` }])
  }
  if (page > MAX_PAGE) throw errors.pageOutOfRange()
  return { page, limit, offset: (page - 1) * limit }
}

/** The pagination object for `total` items; throws `Page out of range` past the last page. */
export function pagination(page: Page, total: number) {
  const total_pages = Math.ceil(total / page.limit)
  if (total_pages >= 1 && page.page > total_pages) throw errors.pageOutOfRange()
  return { page: page.page, limit: page.limit, total, total_pages }
}

export const REQUEST_SUCCESSFUL = 'Request successful'

/** The success envelope. */
export function ok<T>(data: T, text = REQUEST_SUCCESSFUL) {
  return { status: 200, status_description: text, data }
}

/** A success envelope without data. */
export function okMessage(text = REQUEST_SUCCESSFUL) {
  return { status: 200, status_description: text }
}
