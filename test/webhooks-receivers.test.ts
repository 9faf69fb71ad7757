import fs from 'node:fs'
import net from 'node:net'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js'
import { withDeadline } from './helpers/wait.js'

// Receivers at private addresses are refused; the operator's view and the sandbox clock.
forEachDialect((dialect) => {
  describe(`webhooks refuse private receivers (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let receiver: Receiver
    let dir: string

    before(async () => {
      dir = tempDir()
      receiver = await startReceiver(dir)
      t = await startTestApp(dialect, {
        env: { HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile, HOSTAPI_WEBHOOKS_TIMEOUT_MS: '500' },
      })
      a = await t.account('Private B.V.')
    })
    after(async () => {
      await t.close()
      await receiver.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it('refuses URLs naming a loopback, private, link-local or metadata address', async () => {
      const port = new URL(receiver.origin).port
      for (const host of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '[::1]', '[::ffff:127.0.0.1]', 'localhost']) {
        const res = await t.request('POST', '/account/webhooks', {
          key: a.key,
          body: { url: `https://${host}:${port}/hook`, events: ['*'] },
        })
        assert.deepEqual(
          [res.status, res.body.status_description],
          [400, 'Invalid url: the host is not a public address'],
        )
      }
    })

    /** What the operator sees of a delivery's last failure. */
    const detailOf = async (id: number) =>
      (
        await t.ctx.db
          .selectFrom('webhook_deliveries')
          .select('error_detail')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).error_detail ?? ''

    it('does not connect to a name resolving to a private address at delivery', async () => {
      const port = new URL(receiver.origin).port
      const { id } = await t.ctx.services.webhooks.create(a, {
        url: `https://hooks.example.nl:${port}/hook`,
        events: ['*'],
      })
      for (const address of ['127.0.0.1', '10.0.0.7', '169.254.169.254', '::1', '::ffff:127.0.0.1']) {
        t.ctx.services.webhooks.deliverer.setResolver(async () => [{ address, family: address.includes(':') ? 6 : 4 }])
        const queued = await t.ctx.services.webhooks.sendTest(a.accountId, id)
        await t.ctx.jobs.drain()
        const d = (await t.ctx.services.webhooks.deliveries(a.accountId, id)).find((x) => x.id === queued.id)!
        assert.deepEqual([d.status, d.last_error], ['pending', 'Refused: the receiver is not at a public address'])
        assert.match(
          await detailOf(queued.id),
          new RegExp(`^Refused: hooks.example.nl resolves to ${address.replace(/\./g, '\\.')}`),
        )
      }
      assert.equal(receiver.received.length, 0)
    })

    it('counts a lookup that does not answer against the timeout', async () => {
      const { id } = await t.ctx.services.webhooks.create(a, {
        url: 'https://silent.example.nl/hook',
        events: ['*'],
      })
      t.ctx.services.webhooks.deliverer.setResolver(() => new Promise(() => undefined))
      const queued = await t.ctx.services.webhooks.sendTest(a.accountId, id)
      // The lookup never answers: the drain ends only because the lookup is bounded.
      await withDeadline(t.ctx.jobs.drain(), 30_000, 'the delivery attempt ends')
      const d = (await t.ctx.services.webhooks.deliveries(a.accountId, id)).find((x) => x.id === queued.id)!
      assert.deepEqual([d.status, d.last_error], ['pending', 'The receiver could not be reached'])
      assert.equal(await detailOf(queued.id), 'DNS lookup of silent.example.nl failed: no answer within 500 ms')
    })

    it('connects to the address it checked, not to what a second lookup answers (DNS rebinding)', async () => {
      const port = new URL(receiver.origin).port
      const { id } = await t.ctx.services.webhooks.create(a, {
        url: `https://rebind.example.nl:${port}/hook`,
        events: ['*'],
      })
      const answers = ['93.184.215.14', '127.0.0.1']
      let lookups = 0
      t.ctx.services.webhooks.deliverer.setResolver(async () => {
        const address = answers[Math.min(lookups++, answers.length - 1)]
        return [{ address, family: 4 }]
      })
      // No test traffic leaves the machine: the address the sender connects to is recorded and routed to the
      // receiver on loopback, whose certificate does not name rebind.example.nl, so the attempt fails there.
      const dialled: string[] = []
      t.ctx.services.webhooks.deliverer.setDial((checked) => {
        dialled.push(checked.address)
        return { address: '127.0.0.1', family: 4 }
      })
      const queued = await t.ctx.services.webhooks.sendTest(a.accountId, id)
      await t.ctx.jobs.drain()
      t.ctx.services.webhooks.deliverer.setDial(undefined)
      assert.deepEqual(dialled, ['93.184.215.14'])
      const d = (await t.ctx.services.webhooks.deliveries(a.accountId, id)).find((x) => x.id === queued.id)!
      assert.equal(lookups, 1, 'one lookup per attempt')
      assert.equal(d.status, 'pending')
      assert.equal(d.last_error, 'The receiver could not be reached')
      assert.match(await detailOf(queued.id), /^Connection to 93\.184\.215\.14 failed/)
      assert.equal(receiver.received.length, 0)
    })
  })
  describe(`webhooks for the operator and in the sandbox (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let receiver: Receiver
    let dir: string
    let token: string

    before(async () => {
      dir = tempDir()
      receiver = await startReceiver(dir)
      // Sandbox mode allows receivers on private addresses without further configuration.
      t = await startTestApp(dialect, {
        env: { HOSTAPI_SANDBOX: '1', HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile, HOSTAPI_WEBHOOKS_TIMEOUT_MS: '1000' },
      })
      a = await t.account('Operator B.V.')
      token = (await t.ctx.services.admin.createToken('webhooks')).token
    })
    after(async () => {
      await t.close()
      await receiver.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    const adminCall = (method: string, path: string, body?: unknown) =>
      t.request(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${token}` } })
    const metric = async (line: RegExp) => {
      const text = (await adminCall('GET', '/metrics')).text
      return Number(line.exec(text)?.[1])
    }

    it('retries on the sandbox clock, flushes, shows metrics, and lists and redelivers for the operator', async () => {
      const hook = await t.request('POST', '/account/webhooks', {
        key: a.key,
        body: { url: `${receiver.origin}/sandbox`, events: ['*'] },
      })
      assert.equal(hook.status, 200, hook.text)
      const id = hook.body.data.id
      receiver.answer(500, 500)
      await t.request('POST', `/account/webhooks/${id}/test`, { key: a.key })
      let flushed = await adminCall('POST', '/sandbox/webhooks/flush', {})
      assert.deepEqual([flushed.status, flushed.body.data.attempts], [200, 1])
      assert.equal(await metric(/^hostapi_webhook_deliveries_pending (\d+)/m), 1)
      assert.equal(await metric(/^hostapi_webhook_endpoints\{state="failing"\} (\d+)/m), 1)
      assert.ok((await metric(/^hostapi_webhook_oldest_pending_age_seconds (\S+)/m)) >= 0)
      // Moving the sandbox clock past the first wait runs the second attempt.
      await adminCall('POST', '/sandbox/clock', { advance: '6s' })
      await t.ctx.jobs.drain()
      assert.equal(receiver.received.length, 2)
      // The flush with `all` does not wait for the minute the third attempt is due in.
      flushed = await adminCall('POST', '/sandbox/webhooks/flush', { all: true })
      assert.equal(flushed.body.data.attempts, 1)
      assert.equal(receiver.received.length, 3)
      assert.equal(await metric(/^hostapi_webhook_deliveries_pending (\d+)/m), 0)

      const list = await adminCall('GET', `/webhooks/deliveries?account=${a.customerNumber}`)
      assert.equal(list.status, 200, list.text)
      const [d] = list.body.data.deliveries
      assert.deepEqual([d.status, d.attempts, d.webhook_id, d.account_id], ['succeeded', 3, id, a.accountId])
      const again = await adminCall('POST', `/webhooks/deliveries/${d.id}/redeliver`)
      assert.equal(again.status, 200, again.text)
      assert.equal(again.body.data.event_id, d.event_id)
      await adminCall('POST', '/sandbox/webhooks/flush', {})
      assert.equal(receiver.received.length, 4)
      assert.equal(receiver.received[3].headers['webhook-id'], d.event_id)
      const missing = await adminCall('POST', '/webhooks/deliveries/999999/redeliver')
      assert.deepEqual([missing.status, missing.body.status_description], [404, 'Delivery not found'])
    })

    it('tells the customer only that a private receiver could not be reached, the operator why', async () => {
      // Loopback ports of three kinds: closed (refused), open and silent (timeout), open and speaking no TLS.
      const sockets = new Set<net.Socket>()
      const listen = async (onConnection: (s: net.Socket) => void) => {
        const server = net.createServer((s) => {
          sockets.add(s)
          s.on('error', () => undefined)
          onConnection(s)
        })
        await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
        return server
      }
      const closedServer = await listen(() => undefined)
      const closed = (closedServer.address() as net.AddressInfo).port
      await new Promise((done) => closedServer.close(done))
      const silent = await listen(() => undefined)
      const plain = await listen((s) => s.end('SSH-2.0-OpenSSH_9.2\r\n'))
      const ports = [closed, ...[silent, plain].map((s) => (s.address() as net.AddressInfo).port)]
      try {
        const ids: number[] = []
        for (const port of ports) {
          const hook = await t.request('POST', '/account/webhooks', {
            key: a.key,
            body: { url: `https://127.0.0.1:${port}/hook`, events: ['*'] },
          })
          assert.equal(hook.status, 200, hook.text)
          ids.push(hook.body.data.id)
          await t.request('POST', `/account/webhooks/${hook.body.data.id}/test`, { key: a.key })
        }
        await adminCall('POST', '/sandbox/webhooks/flush', {})
        const seen = []
        for (const id of ids) {
          const list = await t.request('GET', `/account/webhooks/${id}/deliveries`, { key: a.key })
          const [d] = list.body.data.deliveries
          seen.push([d.status, d.attempts, d.response_status, d.duration_ms, d.last_error])
        }
        const unreached = ['pending', 1, null, null, 'The receiver could not be reached']
        assert.deepEqual(seen, [unreached, unreached, unreached])
        const admin = await adminCall('GET', `/webhooks/deliveries?account=${a.customerNumber}`)
        const details = ids.map((id) =>
          admin.body.data.deliveries.find((d: { webhook_id: number }) => d.webhook_id === id),
        )
        assert.match(details[0].error_detail, /ECONNREFUSED/)
        assert.match(details[1].error_detail, /no answer within 1000 ms/)
        assert.equal(new Set(details.map((d) => d.error_detail)).size, 3, 'the operator sees each cause')
        for (const d of details) assert.equal(d.last_error, 'The receiver could not be reached')
      } finally {
        for (const s of sockets) s.destroy()
        await Promise.all([silent, plain].map((s) => new Promise((done) => s.close(done))))
      }
    })
  })
})
