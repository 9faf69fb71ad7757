import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { Webhook } from 'standardwebhooks'
import { EVENT_TYPES } from '../src/modules/webhooks/webhook-events.js'
import { eventExample } from '../src/modules/webhooks/webhooks.openapi.js'
import {
  forEachDialect,
  processDatabase,
  request,
  startTestApp,
  tempDir,
  type TestAccount,
  type TestApp,
} from './helpers/app.js'
import { crashableServerEnv, originOf, runCli, spawnServer } from './helpers/process.js'
import { startReceiver, type Received, type Receiver } from './helpers/webhook-receiver.js'

// Sandbox triggers of webhook events, generated over every event type: each is sent, signed, to an endpoint of
// the account, with the view of the account's own resource (or the documented example when it has none), and
// the body validates against the event's schema in the OpenAPI document's `webhooks` section.

// biome-ignore lint/suspicious/noExplicitAny: the payload is read field by field
const verified = (secret: string, r: Received): any => new Webhook(secret).verify(r.body, r.headers)

const SEED_KEY = 'sandbox-events-main-key-0000000001'

forEachDialect((dialect) => {
  describe(`sandbox events (${dialect})`, () => {
    let t: TestApp
    let token: string
    let dir: string
    let receiver: Receiver
    let empty: TestAccount
    let demoNumber: number
    // biome-ignore lint/suspicious/noExplicitAny: compiled from the served document
    const schemas = new Map<string, any>()
    const ajv = new Ajv2020({ strict: false })
    addFormats.default(ajv)

    const adm = (method: string, p: string, body?: unknown) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${token}` } })
    const trigger = (body: unknown) => adm('POST', '/sandbox/events', body)
    const flush = () => adm('POST', '/sandbox/webhooks/flush', { all: true })
    /** An endpoint of the account at a path of its own on the receiver. */
    const endpoint = async (key: string, events: string[] | string = ['*']) => {
      const at = `/hook-${Math.random().toString(36).slice(2)}`
      const list = typeof events === 'string' ? [events] : events
      const res = await t.request('POST', '/account/webhooks', {
        key,
        body: { url: receiver.origin + at, events: list },
      })
      assert.equal(res.status, 200, res.text)
      return { ...(res.body.data as { id: number; secret: string }), at }
    }
    const receivedAt = (at: string) => receiver.received.filter((r) => r.path === at)

    before(async () => {
      dir = tempDir()
      receiver = await startReceiver(dir)
      const seed = path.join(dir, 'seed.yaml')
      const lines = ['accounts:', '  - name: Events B.V.', '    email: owner@events-sandbox.nl', '    demo_data: true']
      fs.writeFileSync(seed, [...lines, '    keys:', `      - key: ${SEED_KEY}`, ''].join('\n'))
      t = await startTestApp(dialect, {
        env: {
          HOSTAPI_SANDBOX: '1',
          HOSTAPI_SEED_FILE: seed,
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
          HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
          HOSTAPI_WEBHOOKS_MAX_ENDPOINTS: '50',
        },
      })
      token = (await t.ctx.services.admin.createToken()).token
      demoNumber = (await t.request('GET', '/whoami', { key: SEED_KEY })).body.data.customer_number
      const doc = (await t.request('GET', '/api/v2/openapi.json')).body
      for (const type of EVENT_TYPES) {
        const schema = doc.webhooks[type].post.requestBody.content['application/json'].schema
        schemas.set(type, ajv.compile(schema))
      }
    })
    after(async () => {
      await t.close()
      await receiver.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it('with one account, triggers go to it without customer_number', async () => {
      const hook = await endpoint(SEED_KEY, 'dns.zone.changed')
      const r = await trigger({ type: 'dns.zone.changed' })
      assert.equal(r.status, 200, r.text)
      assert.equal(r.body.data.customer_number, demoNumber)
      assert.equal(r.body.data.endpoints, 1)
      await flush()
      await receiver.waitFor(1)
      assert.equal(verified(hook.secret, receivedAt(hook.at)[0]).data.account, demoNumber)
      assert.equal((await t.request('DELETE', `/account/webhooks/${hook.id}`, { key: SEED_KEY })).status, 200)
      empty = await t.account('Empty B.V.')
    })

    for (const type of EVENT_TYPES) {
      it(`${type}: sent signed with the view of the account's own resource, valid against its schema`, async () => {
        const hook = await endpoint(SEED_KEY, type)
        const r = await trigger({ type, customer_number: demoNumber })
        assert.equal(r.status, 200, r.text)
        assert.equal(r.body.data.type, type)
        assert.equal(r.body.data.source, 'resource', `${type} has a sampler reading the account's resources`)
        assert.equal(r.body.data.endpoints, 1)
        assert.match(r.body.data.id, /^msg_/)
        await flush()
        const [got] = receivedAt(hook.at)
        assert.ok(got, `${type} arrived`)
        assert.equal(got.headers['webhook-id'], r.body.data.id)
        const body = verified(hook.secret, got)
        assert.equal(body.type, type)
        assert.deepEqual(body.data, r.body.data.data)
        assert.equal(body.data.account, demoNumber)
        const { account: _, ...example } = { ...eventExample(type), account: 0 }
        assert.notDeepEqual({ ...body.data, account: undefined }, { ...example, account: undefined })
        const validate = schemas.get(type)
        assert.ok(validate(body), `${type}: ${JSON.stringify(validate.errors)} in ${got.body}`)
      })

      it(`${type}: an account without such a resource gets the documented example, valid against its schema`, async () => {
        const hook = await endpoint(empty.key, type)
        const r = await trigger({ type, customer_number: empty.customerNumber })
        assert.equal(r.status, 200, r.text)
        assert.equal(r.body.data.source, 'example')
        await flush()
        const body = verified(hook.secret, receivedAt(hook.at)[0])
        assert.deepEqual(body.data, { ...eventExample(type), account: empty.customerNumber })
        const validate = schemas.get(type)
        assert.ok(validate(body), `${type}: ${JSON.stringify(validate.errors)}`)
      })
    }

    it('the real resource: domain.status.changed names the newest domain as the API shows it', async () => {
      const r = await trigger({ type: 'domain.status.changed', customer_number: demoNumber })
      const domain = r.body.data.data.domain
      const shown = await t.request('GET', `/domains/${domain}`, { key: SEED_KEY })
      assert.equal(shown.status, 200)
      assert.equal(r.body.data.data.renewal_date, shown.body.data.renewal_date)
      const cert = await trigger({ type: 'certificate.issued', customer_number: demoNumber })
      const got = await t.request('GET', `/certificates/${cert.body.data.data.id}`, { key: SEED_KEY })
      for (const [k, v] of Object.entries(got.body.data)) assert.deepEqual(cert.body.data.data[k], v, k)
    })

    it('data is merged over the payload; account stays the customer number', async () => {
      const hook = await endpoint(SEED_KEY, 'vps.status.changed')
      const data = { status: 'stopped', extra: { note: 'test' }, account: 1 }
      const r = await trigger({ type: 'vps.status.changed', customer_number: demoNumber, data })
      assert.equal(r.status, 200, r.text)
      await flush()
      const body = verified(hook.secret, receivedAt(hook.at)[0])
      assert.equal(body.data.status, 'stopped')
      assert.deepEqual(body.data.extra, { note: 'test' })
      assert.equal(body.data.account, demoNumber)
      assert.equal(typeof body.data.vps_id, 'number')
    })

    it('an endpoint not subscribed to the type, or whose owner may not read it, receives nothing', async () => {
      const acc = await t.account('Narrow B.V.')
      const other = await endpoint(acc.key, ['invoice.paid'])
      const sub = await t.subUser(acc, { domains: true, 'account-api': true })
      const narrow = await endpoint(sub.key, ['*'])
      const listening = await endpoint(acc.key, ['ticket.replied'])
      const r = await trigger({ type: 'ticket.replied', customer_number: acc.customerNumber })
      assert.equal(r.status, 200)
      assert.equal(r.body.data.endpoints, 1)
      await flush()
      assert.equal(receivedAt(listening.at).length, 1)
      assert.equal(receivedAt(other.at).length, 0, 'not subscribed to ticket.replied')
      assert.equal(receivedAt(narrow.at).length, 0, 'a sub-user without account-tickets')
      const dns = await trigger({ type: 'dns.zone.changed', customer_number: acc.customerNumber })
      assert.equal(dns.body.data.endpoints, 1, "the sub-user's endpoint alone")
      await flush()
      assert.equal(receivedAt(narrow.at).length, 1)
      assert.equal(receivedAt(other.at).length, 0)
    })

    it('an unknown type is a 400 listing the known types; unknown account 404; several accounts and none named 400', async () => {
      const r = await trigger({ type: 'domain.renewed', customer_number: demoNumber })
      assert.equal(r.status, 400)
      assert.equal(
        r.body.status_description,
        `Unknown event type: domain.renewed. Known types: ${EVENT_TYPES.join(', ')}`,
      )
      const none = await trigger({ type: 'dns.zone.changed', customer_number: 999_999_999 })
      assert.deepEqual([none.status, none.body.status_description], [404, 'Account not found'])
      await t.account('Second B.V.')
      const unnamed = await trigger({ type: 'dns.zone.changed' })
      assert.equal(unnamed.status, 400)
      assert.match(unnamed.body.status_description, /^There are \d+ accounts: name the one/)
    })
  })

  describe(`hostapi trigger against a running sandbox server (${dialect})`, () => {
    it('sends the event the server then delivers, signed; refuses an unknown event and a server not in sandbox mode', async () => {
      const dir = tempDir()
      const receiver = await startReceiver(dir)
      const place = await processDatabase(dialect)
      const key = 'sandboxEventsCliDemoKey000001'
      const env = {
        ...crashableServerEnv(place, key),
        HOSTAPI_SANDBOX: '1',
        HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
        HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
      }
      const server = spawnServer(env)
      try {
        const origin = await originOf(server)
        const url = `${receiver.origin}/cli`
        const made = await request(origin, 'POST', '/api/v2/account/webhooks', { key, body: { url, events: ['*'] } })
        assert.equal(made.status, 200, made.text)
        const who = await request(origin, 'GET', '/api/v2/whoami', { key })
        const account = String(who.body.data.customer_number)
        const run = await runCli(env, 'trigger', 'vps.status.changed', '--account', account, '--data', '{"x":1}')
        assert.equal(run.code, 0, run.err)
        const sent = JSON.parse(run.out)
        assert.equal(sent.source, 'resource')
        assert.equal(sent.endpoints, 1)
        const [got] = await receiver.waitFor(1, 30_000)
        assert.equal(got.headers['webhook-id'], sent.id)
        const body = verified(made.body.data.secret, got)
        assert.equal(body.type, 'vps.status.changed')
        assert.deepEqual(body.data, sent.data)
        assert.equal(body.data.x, 1)
        const unknown = await runCli(env, 'trigger', 'vps.exploded')
        assert.equal(unknown.code, 1)
        assert.match(unknown.err, /^Unknown event type: vps\.exploded\. Known types: domain\.order\.completed, /)
        const badData = await runCli(env, 'trigger', 'vps.status.changed', '--data', '[1]')
        assert.deepEqual([badData.code, badData.err.trim()], [2, '--data must be a JSON object'])
        const off = await runCli({ ...env, HOSTAPI_SANDBOX: '0' }, 'trigger', 'vps.status.changed')
        assert.equal(off.code, 2)
        assert.match(off.err, /sandbox mode only/)
      } finally {
        server.child.kill('SIGTERM')
        await server.exited
        await receiver.close()
        await place.remove()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  })
})
