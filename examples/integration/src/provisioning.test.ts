// An integrator's test suite against a hostapi sandbox: the application under test orders domains, reacts to
// webhooks and relies on renewals. Each test stages what it needs through the sandbox controls: a reset with its own
// seed, the sandbox clock, a fault in the asynchronous work behind an order, and a webhook event sent on demand.
//
// Run it against `npm start` in the hostapi checkout (demo mode has the sandbox on and prints an admin token):
//   HOSTAPI_ADMIN_TOKEN=adm_… HOSTAPI_CA=../../data/tls-ca.pem npm test
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { createHostapiAdminClient, createHostapiClient, HostapiError } from 'hostapi-client'
import { startReceiver } from './receiver.js'

const baseUrl = process.env.HOSTAPI_URL ?? 'https://localhost:8443'
const ca = fs.readFileSync(process.env.HOSTAPI_CA ?? 'data/tls-ca.pem', 'utf8')
const admin = createHostapiAdminClient({ baseUrl, token: process.env.HOSTAPI_ADMIN_TOKEN ?? '', ca })

// The seed of this suite: one customer with a fixed key and a domain due for renewal on a known date.
const KEY = 'integration-example-key-000000000001'
const seed = {
  accounts: [
    {
      name: 'Integration B.V.',
      email: 'ops@integration.example',
      keys: [{ key: KEY, label: 'integration tests' }],
      domains: [
        {
          name: 'integration-example.nl',
          renewal_date: '2027-06-01',
          records: [{ type: 'A', name: '@', value: '192.0.2.10' }],
        },
      ],
    },
  ],
}
const api = createHostapiClient({ baseUrl, apiKey: KEY, ca })

/** Polls `check` until it returns a value (deliveries and jobs run in the background), at most `ms`. */
async function eventually<T>(check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error(`not within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('domain provisioning against the hostapi sandbox', () => {
  let customerNumber = 0

  before(async () => {
    const reset = await admin.POST('/sandbox/reset', { body: seed })
    assert.equal(reset.data?.data.seed, 'document')
    await admin.POST('/sandbox/clock', { body: { to: '2027-01-01' } })
    customerNumber = (await api.GET('/api/v2/whoami')).data?.data.customer_number ?? 0
  })
  after(async () => {
    await admin.DELETE('/sandbox/faults')
  })

  it('renews the domain when the clock passes its renewal date', async () => {
    const before = await api.GET('/api/v2/domains/{domain}', { params: { path: { domain: 'integration-example.nl' } } })
    assert.equal(before.data?.data.renewal_date, '2027-06-01')
    await admin.POST('/sandbox/clock', { body: { to: '2027-06-02' } })
    const after = await api.GET('/api/v2/domains/{domain}', { params: { path: { domain: 'integration-example.nl' } } })
    assert.equal(after.data?.data.renewal_date, '2028-06-01')
  })

  it('sees an order the registry refuses end in error, with the reason', async () => {
    const domain = 'refused-by-registry.nl'
    await admin.POST('/sandbox/faults', {
      body: {
        work: 'registry.register',
        params: { domain },
        count: 1,
        status_description: 'Registrant data incomplete',
      },
    })
    const ordered = await api.POST('/api/v2/domains/order', { body: { domain }, idempotencyKey: `order-${domain}` })
    const orderId = ordered.data?.data.order_id ?? 0
    await admin.POST('/sandbox/clock', { body: { advance: '1m' } })
    const order = await eventually(async () => {
      const o = (await api.GET('/api/v2/orders/{order_id}', { params: { path: { order_id: orderId } } })).data?.data
      return o?.status === 'error' ? o : undefined
    })
    assert.deepEqual(order.services[0]?.errors, [{ code: 'refused', description: 'Registrant data incomplete' }])
    // No domain was made: the application must not show it as the customer's.
    const domains = (await api.GET('/api/v2/domains')).data?.data.domains ?? []
    assert.equal(
      domains.some((d) => d.domain === domain),
      false,
    )
    // Asked for by name, it is answered as any domain the account does not hold.
    await assert.rejects(
      api.GET('/api/v2/domains/{domain}', { params: { path: { domain } } }),
      (e) => e instanceof HostapiError && e.status_description === 'You have no access to this resource',
    )
  })

  it('verifies and handles a webhook event sent on demand', async () => {
    const receiver = await startReceiver()
    try {
      const endpoint = await api.POST('/api/v2/account/webhooks', {
        body: { url: receiver.url, events: ['domain.status.changed'] },
      })
      receiver.useSecret(endpoint.data?.data.secret ?? '')
      const sent = await admin.POST('/sandbox/events', {
        body: {
          type: 'domain.status.changed',
          customer_number: customerNumber,
          data: { status: 'pending_cancellation' },
        },
      })
      const delivery = await eventually(async () => receiver.deliveries.find((d) => d.id === sent.data?.data.id))
      assert.equal(delivery.type, 'domain.status.changed')
      assert.equal(delivery.data.domain, 'integration-example.nl')
      assert.equal(delivery.data.status, 'pending_cancellation')
    } finally {
      await receiver.close()
    }
  })
})
