import assert from 'node:assert/strict'
import fs from 'node:fs'
import https from 'node:https'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createHostapiClient, HostapiError, retryDelayMs } from '../clients/typescript/src/index.js'
import { generatedFiles, generateSchema } from '../clients/typescript/scripts/schema.js'
import { ManualClock } from '../src/clock.js'
import { insertZone } from './helpers/dns.js'
import { startTestApp, type TestAccount, type TestApp } from './helpers/app.js'

// The typed client against a real hostapi over HTTPS. The test server's certificate is self-signed: the client is
// given a fetch over node:https that accepts it, as the other tests' requests do.
const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false })

async function httpsFetch(request: Request): Promise<Response> {
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined
  return new Promise((resolve, reject) => {
    const req = https.request(
      request.url,
      { method: request.method, headers: Object.fromEntries(request.headers), agent },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const headers = new Headers()
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v)
          }
          const status = res.statusCode ?? 500
          resolve(new Response(status === 204 ? null : Buffer.concat(chunks), { status, headers }))
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const uniqueDomain = () => `client-${randomBytes(4).toString('hex')}.com`

describe('typed client (hostapi-client)', () => {
  let t: TestApp
  let a: TestAccount
  let sent: Request[] = []
  const recording = (request: Request) => {
    sent.push(request.clone())
    return httpsFetch(request)
  }
  const client = () => {
    sent = []
    return createHostapiClient({ baseUrl: t.origin, apiKey: a.key, fetch: recording })
  }

  before(async () => {
    t = await startTestApp('sqlite')
    a = await t.account()
  })
  after(() => t.close())

  it('lists domains and reads a zone', async () => {
    const domain = uniqueDomain()
    await insertZone(t.ctx.db, a.accountId, domain, {
      records: [{ type: 'A', name: `www.${domain}.`, value: '192.0.2.1' }],
    })
    const { data: list } = await client().GET('/api/v2/domains')
    assert.deepEqual(
      list.data.domains.map((d) => d.domain),
      [domain],
    )
    const { data: zone } = await client().GET('/api/v2/domains/{domain}/dns', { params: { path: { domain } } })
    assert.equal(zone.data.domain, domain)
    assert.ok(zone.data.records.some((r) => r.type === 'A' && r.value === '192.0.2.1'))
  })

  it('lists VPSes, certificates, affiliate commissions; reads the profile', async () => {
    const c = client()
    assert.deepEqual((await c.GET('/api/v2/vps')).data.data.vps, [])
    assert.deepEqual((await c.GET('/api/v2/certificates')).data.data.certificates, [])
    assert.deepEqual((await c.GET('/api/v2/affiliate/commissions')).data.data.commissions, [])
    const { data: profile } = await c.GET('/api/v2/account/profile')
    assert.equal(profile.status, 200)
    assert.equal(profile.data.firstname, 'Owner')
  })

  it('opens a ticket, and a dry run (test: true) changes nothing', async () => {
    const c = client()
    const body = { subject: 'Client', message: 'Hello', department: 'support' as const }
    const dry = await c.POST('/api/v2/account/tickets', { body, test: true })
    assert.equal(dry.response.status, 200)
    assert.match(sent[0]!.url, /\/api\/v2\/account\/tickets\?test=1$/)
    assert.equal(sent[0]!.headers.get('api-key'), a.key)
    assert.equal((await c.GET('/api/v2/account/tickets')).data.data.tickets.length, 0)
    const { data: created } = await c.POST('/api/v2/account/tickets', { body })
    assert.equal(created.data.subject, 'Client')
    const { data: list } = await c.GET('/api/v2/account/tickets')
    assert.deepEqual(
      list.data.tickets.map((x) => x.ticket_number),
      [created.data.ticket_number],
    )
  })

  it('sends Idempotency-Key on orders: a repeated order answers the first one', async () => {
    const c = client()
    const idempotencyKey = `client-${randomBytes(6).toString('hex')}`
    const body = { domain: uniqueDomain() }
    const first = await c.POST('/api/v2/domains/order', { body, idempotencyKey })
    const again = await c.POST('/api/v2/domains/order', { body, idempotencyKey })
    assert.equal(again.data.data.order_id, first.data.data.order_id)
    assert.deepEqual(
      sent.map((r) => r.headers.get('idempotency-key')),
      [idempotencyKey, idempotencyKey],
    )
    const { data: order } = await c.GET('/api/v2/orders/{order_id}', {
      params: { path: { order_id: first.data.data.order_id } },
    })
    assert.equal(order.data.order_id, first.data.data.order_id)
  })

  it('throws HostapiError with the status and status_description of a non-2xx answer', async () => {
    const err = await client()
      .GET('/api/v2/orders/{order_id}', { params: { path: { order_id: 999_999 } } })
      .then(
        () => assert.fail('no error'),
        (e: unknown) => e,
      )
    assert.ok(err instanceof HostapiError)
    assert.equal(err.status, 404)
    assert.equal(err.status_description, 'Order not found')
    assert.deepEqual(err.body, { status: 404, status_description: 'Order not found' })
  })

  it('is generated from the committed openapi.json and openapi-admin.json (npm run client:generate)', async () => {
    for (const { file, source } of generatedFiles)
      assert.equal(
        fs.readFileSync(file, 'utf8'),
        await generateSchema(source),
        `${file.pathname} is stale: run npm run client:generate`,
      )
  })
})

describe('typed client: 429 and Retry-After', () => {
  let t: TestApp
  let a: TestAccount
  const clock = new ManualClock()
  before(async () => {
    t = await startTestApp('sqlite', { clock, env: { HOSTAPI_RATE_LIMIT: '2' } })
    a = await t.account()
  })
  after(() => t.close())

  it('waits Retry-After seconds (on the server clock) and sends the call again', async () => {
    const waits: number[] = []
    const sleep = async (ms: number) => {
      waits.push(ms)
      clock.advance(ms)
    }
    const c = createHostapiClient({ baseUrl: t.origin, apiKey: a.key, fetch: httpsFetch, sleep })
    await c.GET('/api/v2/account/profile')
    await c.GET('/api/v2/account/profile')
    const { data } = await c.GET('/api/v2/account/profile')
    assert.equal(data.status, 200)
    assert.equal(waits.length, 1)
    assert.ok(waits[0]! >= 1000 && waits[0]! <= 60_000, String(waits[0]))

    clock.advance(61_000)
    const once = createHostapiClient({ baseUrl: t.origin, apiKey: a.key, fetch: httpsFetch, sleep, retries: 0 })
    await once.GET('/api/v2/account/profile')
    await once.GET('/api/v2/account/profile')
    await assert.rejects(once.GET('/api/v2/account/profile'), (e: unknown) => {
      assert.ok(e instanceof HostapiError)
      assert.equal(e.status, 429)
      assert.equal(e.status_description, 'Rate limit exceeded')
      return true
    })
  })

  it('bounds the wait: seconds or an HTTP date, at most maxRetryWait', () => {
    assert.equal(retryDelayMs('3', 60), 3000)
    assert.equal(retryDelayMs('3600', 60), 60_000)
    assert.equal(retryDelayMs(new Date(10_000).toUTCString(), 60, 5_000), 5000)
    assert.equal(retryDelayMs(null, 60), 1000)
  })
})
