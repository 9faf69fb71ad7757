// `npm run bench:stall`: the event-loop budget. Every operation's fixture request and largest valid input, the
// known heavy inputs (a 10 MiB zone of 50,000 records, 10,000 records, the deepest and most-valued JSON bodies,
// 64 KiB of nested tags in ticket messages), the jobs each queues and the DNS server's rebuild after a change, sent
// one at a time to a server in this process while an event-loop delay histogram measures the longest block of each.
// Prints each route family's worst single block against the 50 ms budget, and writes bench/stall-results.json.
// The cases are test/stall.test.ts's (test/helpers/stall.ts); SQLite (better-sqlite3 queries run on the event loop).
// BENCH_STALL_ONLY=heavy skips the generated per-operation cases.
import fs from 'node:fs'
import path from 'node:path'
import { startTestApp } from '../test/helpers/app.js'
import { freePort } from '../test/helpers/dns.js'
import { orderedOperations } from '../test/helpers/routes.js'
import { makeTicket } from '../test/helpers/fixtures/account.js'
import {
  BUDGET_MS,
  heavyDnsCases,
  heavyTicketCases,
  routeCases,
  runCases,
  type StallResult,
  worstByFamily,
} from '../test/helpers/stall.js'
import { root } from './harness.js'

const progress = (text: string) => process.stderr.write(`bench:stall: ${text}\n`)

const t = await startTestApp('sqlite', {
  env: { HOSTAPI_RATE_LIMIT: '100000000', HOSTAPI_SANDBOX: '1', HOSTAPI_DNS_PORT: String(await freePort()) },
})
const results: StallResult[] = []
try {
  const customer = await t.account('Stall Customer B.V.')
  const who = {
    account: await t.account('Stall B.V.'),
    adminToken: (await t.ctx.services.admin.createToken('stall')).token,
    customer,
    customerTicket: await makeTicket(t, customer),
  }
  progress('heavy DNS inputs')
  results.push(...(await runCases(t, await heavyDnsCases(t, who))))
  progress('ticket messages of nested tags')
  results.push(...(await runCases(t, await heavyTicketCases(t, who))))
  if (process.env.BENCH_STALL_ONLY !== 'heavy') {
    const routes = orderedOperations(t.server.app.routeTable)
    progress(`${routes.length} operations`)
    for (const r of routes) {
      results.push(...(await runCases(t, await routeCases(t, r, who))))
      if (r.operationId === 'sandboxReset') break
    }
  }
} finally {
  await t.close()
}

const rows = worstByFamily(results).map((r) => ({
  family: r.family,
  'worst block (ms)': Math.round(r.blockMs),
  budget: r.blockMs <= BUDGET_MS ? 'within' : `over ${BUDGET_MS} ms`,
  'worst request': r.label.slice(0, 90),
}))
console.table(rows)
const over = rows.filter((r) => r['worst block (ms)'] > BUDGET_MS).length
console.log(`${results.length} requests measured; ${over} of ${rows.length} families over the ${BUDGET_MS} ms budget`)
fs.writeFileSync(
  path.join(root, 'bench', 'stall-results.json'),
  `${JSON.stringify({ budgetMs: BUDGET_MS, families: rows, results }, null, 2)}\n`,
)
