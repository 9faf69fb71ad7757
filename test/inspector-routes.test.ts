import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, request, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { INSPECTOR_CSP, INSPECTOR_FILES } from '../src/http/inspector.js'

// What the sandbox inspector reads besides the page: the journal's cursor, an account's resources, one webhook
// delivery; and where the page is served (docs/inspector.md).

const NOT_FOUND = { status: 404, status_description: 'Endpoint not found' }

forEachDialect((dialect) => {
  describe(`inspector reads (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let token: string
    const adm = (method: string, p: string, body?: unknown) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${token}` } })

    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_SANDBOX: '1', HOSTAPI_JOURNAL_SIZE: '4' } })
      a = await t.account('Inspect B.V.')
      token = (await t.ctx.services.admin.createToken()).token
    })
    after(() => t.close())

    it('lists only the journal calls after a cursor, and ids keep rising across a clear', async () => {
      for (let i = 0; i < 3; i++) await t.request('GET', '/whoami', { key: a.key })
      const all = (await adm('GET', '/sandbox/journal')).body.data.entries
      const ids = all.map((e: { id: number }) => e.id)
      assert.equal(ids.length, 3)
      const after = await adm('GET', `/sandbox/journal?after=${ids[0]}`)
      assert.deepEqual(
        after.body.data.entries.map((e: { id: number }) => e.id),
        ids.slice(1),
      )
      assert.deepEqual((await adm('GET', `/sandbox/journal?after=${ids[2]}`)).body.data.entries, [])
      assert.equal((await adm('GET', '/sandbox/journal?after=-1')).status, 400)
      // Over the ring's size (4): the cursor still finds the newest, oldest first.
      for (let i = 0; i < 5; i++) await t.request('GET', '/whoami', { key: a.key })
      const newer = (await adm('GET', `/sandbox/journal?after=${ids[2]}&limit=2`)).body.data.entries
      assert.deepEqual(
        newer.map((e: { id: number }) => e.id),
        [ids[2] + 4, ids[2] + 5],
      )
      const clears = (await adm('GET', '/sandbox/journal')).body.data.clears
      await adm('DELETE', '/sandbox/journal')
      assert.equal((await adm('GET', '/sandbox/journal')).body.data.clears, clears + 1, 'a reader sees the clear')
      await t.request('GET', '/whoami', { key: a.key })
      const cleared = (await adm('GET', `/sandbox/journal?after=${ids[2] + 5}`)).body.data.entries
      assert.deepEqual(
        cleared.map((e: { id: number }) => e.id),
        [ids[2] + 6],
      )
    })

    it("reads an account's domains with records, VPS and certificates; 404 for an unknown account", async () => {
      const order = await t.request('POST', '/domains/order', { key: a.key, body: { domain: 'inspect-reads.com' } })
      assert.equal(order.status, 200, order.text)
      await t.ctx.jobs.drain()
      const added = await t.request('PATCH', '/domains/inspect-reads.com/dns', {
        key: a.key,
        body: { record: { type: 'A', name: 'www', value: '192.0.2.7' } },
      })
      assert.equal(added.status, 200, added.text)
      const r = await adm('GET', `/accounts/${a.customerNumber}/resources`)
      assert.equal(r.status, 200, r.text)
      const domain = r.body.data.domains.find((d: { name: string }) => d.name === 'inspect-reads.com')
      assert.ok(domain, r.text)
      assert.ok(
        domain.records.some((x: { type: string; value: string }) => x.type === 'A' && x.value === '192.0.2.7'),
        JSON.stringify(domain.records),
      )
      assert.equal(domain.dns, null, 'no built-in DNS server listens in this test (HOSTAPI_DNS_PORT=0)')
      assert.deepEqual([r.body.data.vps, r.body.data.certificates], [[], []])
      assert.deepEqual((await adm('GET', '/accounts/999999/resources')).body, {
        status: 404,
        status_description: 'Account not found',
      })
    })

    it('answers 404 for an unknown webhook delivery', async () => {
      assert.deepEqual((await adm('GET', '/webhooks/deliveries/999999')).body, {
        status: 404,
        status_description: 'Delivery not found',
      })
    })
  })
})

describe('where the inspector is served', () => {
  it('not outside sandbox mode', async () => {
    const t = await startTestApp('sqlite')
    try {
      for (const path of ['/sandbox', '/sandbox/inspector.js'])
        assert.deepEqual((await t.request('GET', path)).body, NOT_FOUND, path)
    } finally {
      await t.close()
    }
  })

  it('on the admin listener only, when the admin API has one', async () => {
    const t = await startTestApp('sqlite', { env: { HOSTAPI_SANDBOX: '1', HOSTAPI_ADMIN_PORT: '0' } })
    try {
      const admin = new URL(t.server.adminUrl).origin
      assert.deepEqual((await t.request('GET', '/sandbox')).body, NOT_FOUND)
      for (const name of Object.keys(INSPECTOR_FILES)) {
        const res = await request(admin, 'GET', `/sandbox${name === 'index.html' ? '' : `/${name}`}`)
        assert.equal(res.status, 200, name)
        assert.equal(res.headers['content-type'], INSPECTOR_FILES[name], name)
        assert.equal(res.headers['content-security-policy'], INSPECTOR_CSP, name)
      }
      assert.deepEqual((await request(admin, 'GET', '/sandbox/index.html.bak')).body, NOT_FOUND)
    } finally {
      await t.close()
    }
  })
})
