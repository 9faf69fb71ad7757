import { errors } from '../errors.js'

/** Paging of every list: the page asked for, checked, and the pagination object of the answer. */

export const DEFAULT_LIMIT = 25
export const MAX_LIMIT = 100
/**
 * The highest page any list can have: no list holds 2^31 items. A page above it answers `Page out of range`
 * before any query, so no offset reaches the database that SQLite or PostgreSQL would refuse.
 */
export const MAX_PAGE = 2 ** 31 - 1

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
  if (typeof page !== 'number' || !Number.isInteger(page) || page < 1) throw errors.invalidPage()
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw errors.invalidLimit(MAX_LIMIT)
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
