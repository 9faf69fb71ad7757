import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { freshDatabase, startTestApp, tempDir, type TestApp } from './helpers/app.js'
import { makeTicket } from './helpers/fixtures/account.js'
import { orderedOperations } from './helpers/routes.js'
import { routeCases, type StallActors, type StallCase } from './helpers/stall.js'
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js'

/**
 * While PostgreSQL cannot be reached, every operation answers 503 with Retry-After in the envelope (or answers
 * without the database), never another 5xx and never a hang: generated over the route table. The outage is a cut of
 * the TCP path between the app and a real PostgreSQL (every connection reset, new ones refused), as a failover or a
 * network partition looks to the app; the app answers again once the path is back.
 */
const pgUrl = process.env.HOSTAPI_TEST_PG_URL
describe('every operation while PostgreSQL is unreachable', {
  skip: pgUrl ? undefined : 'HOSTAPI_TEST_PG_URL not set',
}, () => {
  let proxy: TcpProxy
  let t: TestApp
  let drop: () => Promise<void>
  const dataDir = tempDir()
  const cases: StallCase[] = []
  let key = ''

  before(async () => {
    const target = new URL(pgUrl as string)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const fresh = await freshDatabase('postgres', dataDir)
    drop = fresh.drop
    if (fresh.database.dialect !== 'postgres') throw new Error('a PostgreSQL database was asked for')
    const proxied = new URL(fresh.database.url)
    proxied.port = String(proxy.port)
    t = await startTestApp('postgres', {
      database: { ...fresh.database, url: proxied.href, connectTimeoutMs: 1000 },
      // The customer keys stay known through the outage, as they do for a second after each lookup, so the requests
      // reach the operations rather than stop at the key check.
      env: { HOSTAPI_RATE_LIMIT: '100000000', HOSTAPI_SANDBOX: '1', HOSTAPI_AUTH_CACHE_MS: '60000' },
    })
    const customer = await t.account('Outage Customer B.V.')
    const who: StallActors = {
      account: await t.account('Outage B.V.'),
      adminToken: (await t.ctx.services.admin.createToken('outage')).token,
      customer,
      customerTicket: await makeTicket(t, customer),
    }
    key = who.account.key
    for (const r of orderedOperations(t.server.app.routeTable)) {
      const fixture = (await routeCases(t, r, who)).find((c) => c.label.endsWith('(fixture)'))
      if (fixture) cases.push(fixture)
    }
    await t.ctx.jobs.drain()
    for (const k of [who.account.key, customer.key])
      assert.equal((await t.request('GET', '/api/v2/whoami', { key: k })).status, 200)
  })

  after(async () => {
    await t?.close()
    await proxy?.close()
    await drop?.()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('answers 503 with Retry-After in the envelope, and answers again once the database is back', async (ctx) => {
    proxy.cut()
    const wrong: string[] = []
    let unavailable = 0
    const others = new Map<number, number>()
    for (const c of cases) {
      const res = await t.request(c.method, c.path, {
        headers: c.headers,
        ...(c.payload === undefined ? {} : { rawBody: c.payload }),
      })
      const body = res.body as { status?: unknown; status_description?: unknown } | string
      if (res.status === 503) {
        unavailable++
        if (!res.headers['retry-after']) wrong.push(`${c.label}: 503 without Retry-After`)
        if (typeof body !== 'object' || body.status !== 503 || typeof body.status_description !== 'string')
          wrong.push(`${c.label}: 503 outside the envelope: ${res.text.slice(0, 200)}`)
      } else {
        others.set(res.status, (others.get(res.status) ?? 0) + 1)
        if (res.status >= 500) wrong.push(`${c.label}: ${res.status} ${res.text.slice(0, 200)}`)
      }
    }
    ctx.diagnostic(
      `${unavailable} of ${cases.length} answered 503; others: ${JSON.stringify(Object.fromEntries(others))}`,
    )
    assert.deepEqual(wrong, [])
    // Nearly every operation reads the database; one that answered otherwise did without it.
    assert.ok(unavailable > cases.length / 2, `${unavailable} of ${cases.length} operations answered 503`)
    proxy.restore()
    // The pool dropped the connections that were reset; the next request opens a new one.
    const again = await t.request('GET', '/api/v2/domains', { key })
    assert.equal(again.status, 200, again.text)
  })
})
