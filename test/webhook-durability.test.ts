import fs from 'node:fs'
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { forEachDialect, processDatabase, rawRows, request, tempDir } from './helpers/app.js'
import { spawnServer } from './helpers/process.js'
import { startReceiver } from './helpers/webhook-receiver.js'

const KEY = 'webhookDurabilityKey00000001'
const ZONE = 'demo-shop.nl'
const LISTENING = /^hostapi listening on (https:\/\/\S+)/

// An event committed with its change is delivered even when the process dies before delivering it.
forEachDialect((dialect) => {
  describe(`webhook events survive SIGKILL (${dialect})`, () => {
    it('delivers after a restart an event committed before the process was killed', async () => {
      const dir = tempDir()
      const receiver = await startReceiver(dir)
      const place = await processDatabase(dialect)
      const env = {
        ...place.env,
        HOSTAPI_PORT: '0',
        HOSTAPI_DNS_PORT: '0',
        HOSTAPI_DEMO_KEY: KEY,
        HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
        HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
        HOSTAPI_JOB_POLL_MS: '50',
      }
      // The first process runs no jobs: it commits the change and its event, and dies before any delivery.
      const first = spawnServer({ ...env, HOSTAPI_JOBS: '0' })
      try {
        const [, url] = await first.waitFor(LISTENING)
        const origin = url.replace(/\/api\/v2$/, '')
        const hook = await request(origin, 'POST', '/api/v2/account/webhooks', {
          key: KEY,
          body: { url: `${receiver.origin}/killed`, events: ['dns.zone.changed'] },
        })
        assert.equal(hook.status, 200, hook.text)
        const patch = await request(origin, 'PATCH', `/api/v2/domains/${ZONE}/dns`, {
          key: KEY,
          body: { record: { type: 'TXT', name: 'hook', value: 'before-kill', ttl: 300 } },
        })
        assert.equal(patch.status, 200, patch.text)
        first.child.kill('SIGKILL')
        assert.equal((await first.exited).signal, 'SIGKILL')
        assert.equal(receiver.received.length, 0)
        const pending = await rawRows(place.database, "select status from webhook_deliveries where status = 'pending'")
        assert.equal(pending.length, 1)

        const second = spawnServer({ ...env, HOSTAPI_JOBS: '1' })
        try {
          await second.waitFor(LISTENING)
          const [r] = await receiver.waitFor(1, 20_000)
          assert.equal(r.path, '/killed')
          const payload = new Webhook(hook.body.data.secret).verify(r.body, r.headers) as {
            type: string
            data: { domain: string }
          }
          assert.deepEqual([payload.type, payload.data.domain], ['dns.zone.changed', ZONE])
        } finally {
          second.child.kill('SIGTERM')
          await second.exited
        }
      } finally {
        first.child.kill('SIGKILL')
        await receiver.close()
        await place.remove()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  })
})
