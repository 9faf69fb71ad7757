import type { RouteEntry } from '../../src/http/route-table.js'
import type { TestAccount, TestApp } from './app.js'
import { orderFixtures } from './fixtures/orders.js'
import { domainFixtures } from './fixtures/domains.js'
import { certificateFixtures } from './fixtures/certificates.js'
import { accountFixtures } from './fixtures/account.js'
import { vpsFixtures } from './fixtures/vps.js'
import { webhookFixtures } from './fixtures/webhooks.js'

/**
 * What the generated security cases need for a route: path parameter values that name a resource of
 * `owner`, a body that passes validation (validation comes before ownership), and the answer the route
 * gives for a resource the caller cannot see (another account's resource is indistinguishable from a
 * missing one). Routes without path parameters need no fixture unless they need a body.
 */
export interface FixtureResult {
  params: Record<string, string>
  body?: unknown
  notFound?: { status: number; text: string }
}

export type Fixture = (t: TestApp, owner: TestAccount, route: RouteEntry) => Promise<FixtureResult>

/**
 * Fixtures by the name a route declares in `config.fixture`. Each area keeps its fixtures in
 * `test/helpers/fixtures/<area>.ts` and spreads them in here.
 */
export const fixtures: Record<string, Fixture> = {
  ...orderFixtures,
  ...domainFixtures,
  ...certificateFixtures,
  ...accountFixtures,
  ...vpsFixtures,
  ...webhookFixtures,
}
