import { ADMIN_PREFIX, API_PREFIX } from '../../src/http/constants.js'
import type { RouteEntry } from '../../src/http/route-table.js'

/**
 * The operations of the route table that the generated suites (fuzz, stall) send requests to, in the order they may
 * be sent on one app: the customer API first, then the admin API (it suspends accounts and changes the catalog), the
 * sandbox controls, and the sandbox reset (it deletes every account) last. HEAD is left out: it is the GET
 * operation without a body, so sending the GET covers it.
 */
export function orderedOperations(routeTable: readonly RouteEntry[]): RouteEntry[] {
  const all = routeTable.filter(
    (r) => r.method !== 'HEAD' && r.operationId && (r.url.startsWith(API_PREFIX) || r.url.startsWith(ADMIN_PREFIX)),
  )
  const rank = (r: RouteEntry) =>
    r.url.startsWith(API_PREFIX)
      ? 0
      : r.operationId === 'sandboxReset'
        ? 3
        : r.url.startsWith(`${ADMIN_PREFIX}/sandbox`)
          ? 2
          : 1
  return [...all].sort((x, y) => rank(x) - rank(y))
}
