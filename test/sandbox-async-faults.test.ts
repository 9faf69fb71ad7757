import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { WORK_KINDS, type WorkKind } from '../src/ops/faults.js'
import { forEachDialect, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { makeCertificatePackage } from './helpers/fixtures/certificates.js'
import { makeDomain, uniqueName } from './helpers/fixtures/domains.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js'

// Sandbox faults in asynchronous work: each work kind is failed through the admin API, the work is caused through
// the customer API, the jobs run by moving the sandbox clock, and the customer sees the failure the real outside
// party would cause (and the work running normally once the fault is used up).

const TIMEOUT_MS = 300

forEachDialect((dialect) => {
  describe(`sandbox faults in asynchronous work (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let receiver: Receiver
    let dir: string
    let token: string
    const adm = (method: string, p: string, body?: unknown) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${token}` } })
    const api = (method: string, p: string, body?: unknown) => t.request(method, p, { key: a.key, body })
    /** Moves the sandbox clock by `advance`: the jobs that became due run before the answer. */
    const run = async (advance = '1s') => {
      const moved = await adm('POST', '/sandbox/clock', { advance })
      assert.equal(moved.status, 200, moved.text)
    }
    /** Adds a fault through the admin API and checks the answer names the work. */
    const fault = async (body: Record<string, unknown>) => {
      const res = await adm('POST', '/sandbox/faults', body)
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.data.work, body.work)
      assert.equal(res.body.data.operation, null)
      return res.body.data
    }
    /** The payloads of the events of `type` the account's catch-all endpoint received. */
    // biome-ignore lint/suspicious/noExplicitAny: payloads are read field by field
    const events = (type: string): any[] =>
      receiver.received
        .filter((r) => r.path === '/all')
        .map((r) => JSON.parse(r.body))
        .filter((p) => p.type === type)

    before(async () => {
      dir = tempDir()
      receiver = await startReceiver(dir)
      t = await startTestApp(dialect, {
        env: {
          HOSTAPI_SANDBOX: '1',
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
          HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
          HOSTAPI_WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS),
        },
      })
      token = (await t.ctx.services.admin.createToken()).token
      a = await t.account('Async Faults B.V.')
      const hook = await api('POST', '/account/webhooks', { url: `${receiver.origin}/all`, events: ['*'] })
      assert.equal(hook.status, 200, hook.text)
    })
    after(async () => {
      await t.close()
      await receiver.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    /** One case per work kind: typed over WORK_KINDS, and run for every kind the server knows (below). */
    const CASES: Record<WorkKind, () => Promise<void>> = {
      'registry.register': async () => {
        const refused = uniqueName('refused', 'com')
        const accepted = uniqueName('accepted', 'com')
        await fault({
          work: 'registry.register',
          params: { domain: refused },
          count: 1,
          status_description: 'Registrant data incomplete',
        })
        const order = await api('POST', '/domains/order', { domain: refused })
        assert.equal(order.status, 200, order.text)
        const other = await api('POST', '/domains/order', { domain: accepted })
        assert.equal(other.status, 200, other.text)
        await run()

        const failed = (await api('GET', `/orders/${order.body.data.order_id}`)).body.data
        assert.equal(failed.status, 'error')
        assert.equal(failed.services[0].status, 'error')
        assert.deepEqual(failed.services[0].errors, [{ code: 'refused', description: 'Registrant data incomplete' }])
        assert.equal(
          (await api('GET', '/domains')).body.data.domains.some((d: { domain: string }) => d.domain === refused),
          false,
          'no domain was created',
        )
        const [event] = events('domain.order.failed').filter((e) => e.data.order_id === order.body.data.order_id)
        assert.ok(event, 'domain.order.failed was sent')
        assert.deepEqual(event.data.errors, [{ code: 'refused', description: 'Registrant data incomplete' }])
        // Another name is not matched; the fault was used up.
        assert.equal((await api('GET', `/orders/${other.body.data.order_id}`)).body.data.status, 'completed')
        assert.equal((await api('GET', `/domains/${accepted}`)).status, 200)
      },

      'vps.task': async () => {
        const id = await makeVps(t, a, { settle: true })
        // Any VPS of the account: its customer number, no params.
        await fault({ work: 'vps.task', customer_number: a.customerNumber, count: 1, status_description: 'Disk stall' })
        const restart = await api('POST', `/vps/${id}/restart`)
        assert.equal(restart.status, 200, restart.text)
        const taskId = restart.body.data.task.id
        await run()

        const failed = events('vps.task.failed').find((e) => e.data.id === taskId)
        assert.ok(failed, 'vps.task.failed was sent')
        assert.equal(failed.data.vps_id, id)
        assert.equal(failed.data.status, 'failed')
        assert.equal(failed.data.error, 'Disk stall')
        const vps = (await api('GET', `/vps/${id}`)).body.data
        assert.equal(vps.vps_locked, false)
        assert.equal(vps.status, 'running', 'the state the hypervisor reports')
        assert.deepEqual(vps.tasks, [])
        // Used up: the next task runs.
        const again = await api('POST', `/vps/${id}/restart`)
        await run()
        assert.ok(events('vps.task.completed').some((e) => e.data.id === again.body.data.task.id))
      },

      'ca.issue': async () => {
        const id = await makeCertificatePackage(t, a)
        const name = `${uniqueName('shop', 'com')}`
        await fault({
          work: 'ca.issue',
          params: { domain: name },
          count: 1,
          status_description: 'CAA forbids issuance',
        })
        const body = { common_name: name, organization: 'Example B.V.', email: 'admin@example.com', country: 'NL' }
        const csr = await api('POST', '/certificates/csr', { ...body, state: 'Noord-Holland', locality: 'Amsterdam' })
        assert.equal(csr.status, 200, csr.text)
        const req = await api('POST', `/certificates/${id}/request`, {
          csr: csr.body.data.csr,
          validation_method: 'http',
        })
        assert.equal(req.status, 200, req.text)
        await run()

        const cert = (await api('GET', `/certificates/${id}`)).body.data
        assert.equal(cert.certificate_status, 'ERR')
        assert.equal(cert.status_message, 'The CA refused the request: CAA forbids issuance')
        const failed = events('certificate.failed').find((e) => e.data.id === id)
        assert.ok(failed, 'certificate.failed was sent')
        assert.equal(failed.data.status_message, 'The CA refused the request: CAA forbids issuance')
      },

      'webhook.delivery': async () => {
        const hook = await api('POST', '/account/webhooks', {
          url: `${receiver.origin}/slow`,
          events: ['dns.zone.changed'],
        })
        assert.equal(hook.status, 200, hook.text)
        const hookId = hook.body.data.id
        await fault({ work: 'webhook.delivery', params: { endpoint: String(hookId) }, count: 1 })
        const domain = await makeDomain(t, a)
        const patch = await api('PATCH', `/domains/${domain}/dns`, {
          record: { type: 'TXT', name: 'probe', value: 'timeout', ttl: 300 },
        })
        assert.equal(patch.status, 200, patch.text)
        await run()

        const slow = () => receiver.received.filter((r) => r.path === '/slow')
        assert.equal(slow().length, 0, 'nothing was sent')
        let [delivery] = (await api('GET', `/account/webhooks/${hookId}/deliveries`)).body.data.deliveries
        assert.equal(delivery.status, 'pending')
        assert.equal(delivery.attempts, 1)
        assert.equal(delivery.last_error, 'The receiver could not be reached')
        assert.equal(delivery.response_status, null)
        // The operator sees the cause and the time the attempt took, as for a receiver that really timed out.
        const listed = await adm('GET', `/webhooks/deliveries?account=${a.customerNumber}`)
        const detail = listed.body.data.deliveries.find((d: { id: number }) => d.id === delivery.id)
        assert.equal(detail.error_detail, `Connection to 127.0.0.1 failed: no answer within ${TIMEOUT_MS} ms`)
        assert.ok(detail.duration_ms >= TIMEOUT_MS, `the attempt took the timeout (${detail.duration_ms} ms)`)
        const wait = Date.parse(delivery.next_attempt_at) - Date.parse(delivery.last_attempt_at)
        // The first wait, 5 s ± 10 %, counts from the attempt's end (the timeout after its start).
        assert.ok(wait >= 4500 && wait <= 5500 + TIMEOUT_MS + 1000, `retried on the backoff schedule (${wait} ms)`)
        // A sibling endpoint of the account got the event at once.
        assert.ok(events('dns.zone.changed').some((e) => e.data.domain === domain))

        // The fault is used up: the retry reaches the receiver.
        await run('10s')
        ;[delivery] = (await api('GET', `/account/webhooks/${hookId}/deliveries`)).body.data.deliveries
        assert.equal(delivery.status, 'succeeded')
        assert.equal(delivery.attempts, 2)
        assert.equal(delivery.response_status, 200)
        assert.equal(slow().length, 1)
        assert.equal(JSON.parse(slow()[0].body).data.domain, domain)
      },
    }

    for (const work of Object.keys(WORK_KINDS)) {
      it(`${work}: fails as the outside party would, once, then the work runs`, async () => {
        const kase = CASES[work as WorkKind]
        assert.ok(kase, `a case for the work kind ${work}`)
        try {
          await kase()
          assert.deepEqual((await adm('GET', '/sandbox/faults')).body.data.faults, [], 'the fault was used up')
        } finally {
          // A case that failed leaves no fault behind for the next.
          await adm('DELETE', '/sandbox/faults')
        }
      })
    }

    it('refuses a fault with an unknown work kind, two targets or none, or an answer field; lists, removes, resets', async () => {
      const known = Object.keys(WORK_KINDS).join(', ')
      assert.deepEqual((await adm('POST', '/sandbox/faults', { work: 'registry.explode' })).body, {
        status: 400,
        status_description: `Unknown work: registry.explode (use one of ${known})`,
      })
      assert.deepEqual((await adm('POST', '/sandbox/faults', { work: 'vps.task', operation: 'whoami' })).body, {
        status: 400,
        status_description: 'Set either operation or work',
      })
      assert.deepEqual((await adm('POST', '/sandbox/faults', { count: 1 })).body, {
        status: 400,
        status_description: 'Set either operation or work',
      })
      assert.deepEqual((await adm('POST', '/sandbox/faults', { work: 'ca.issue', status: 503 })).body, {
        status: 400,
        status_description: 'status applies to faults of an operation only: work fails as its outside party fails it',
      })
      assert.deepEqual((await adm('GET', '/sandbox/faults')).body.data.faults, [], 'nothing was added')

      const one = await fault({ work: 'vps.task', params: { vps: '1' } })
      await fault({ work: 'webhook.delivery', probability: 0.5 })
      const op = await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 503 })
      assert.equal(op.body.data.work, null)
      const listed = (await adm('GET', '/sandbox/faults')).body.data.faults
      assert.deepEqual(
        listed.map((f: { work: string | null; operation: string | null }) => f.work ?? f.operation),
        ['vps.task', 'webhook.delivery', 'whoami'],
      )
      assert.equal((await adm('DELETE', `/sandbox/faults/${one.id}`)).status, 200)
      assert.equal((await adm('GET', '/sandbox/faults')).body.data.faults.length, 2)
      assert.equal((await adm('POST', '/sandbox/reset')).status, 200)
      assert.deepEqual((await adm('GET', '/sandbox/faults')).body.data.faults, [], 'a reset removes them')
    })
  })
})
