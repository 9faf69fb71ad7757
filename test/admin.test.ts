import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { generateKeyPairSync } from 'node:crypto'
import sshpk from 'sshpk'
import { Type } from 'typebox'
import { defineJob } from '../src/jobs/runner.js'
import { forEachDialect, request, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'

const sshKey = () => {
  const { publicKey } = generateKeyPairSync('ed25519', { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
  return `${sshpk.parseKey(publicKey, 'pem').toString('ssh')} test`
}

const NO_TOKEN = { status: 401, status_description: 'No valid admin token set' }
const NO_KEY = { status: 401, status_description: 'No valid API key set' }

forEachDialect((dialect) => {
  describe(`admin API on the main listener (${dialect})`, () => {
    let t: TestApp
    let token: string
    let a: TestAccount
    const adm = (method: string, p: string, body?: unknown, tok = token) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${tok}` } })

    before(async () => {
      // Every admin route with wrong credentials from one address on purpose: the failed-credential throttle is off here.
      t = await startTestApp(dialect, { env: { HOSTAPI_AUTH_FAIL_LIMIT: '0' } })
      token = (await t.ctx.services.admin.createToken('test')).token
      a = await t.account('Tenant A')
    })
    after(() => t.close())

    it('refuses every admin route without a valid admin token, customer keys included', async () => {
      const routes = t.server.app.routeTable.filter((r) => r.url.startsWith('/admin/v1') && r.method !== 'HEAD' && !r.url.endsWith('/openapi.json'))
      assert.ok(routes.length >= 15, `${routes.length} admin routes`)
      const revoked = await t.ctx.services.admin.createToken('old')
      await t.ctx.services.admin.revokeToken(revoked.prefix)
      for (const r of routes) {
        const p = r.url.replace(/:customer_number/, String(a.customerNumber)).replace(/:[a-z_]+/g, '1')
        const label = `${r.method} ${r.url}`
        assert.deepEqual((await t.request(r.method, p, { body: {} })).body, NO_TOKEN, label)
        assert.deepEqual((await t.request(r.method, p, { body: {}, key: a.key })).body, NO_TOKEN, label)
        assert.deepEqual((await t.request(r.method, p, { body: {}, headers: { authorization: `Bearer ${a.key}` } })).body, NO_TOKEN, label)
        assert.deepEqual((await t.request(r.method, p, { body: {}, headers: { authorization: `Bearer ${revoked.token}` } })).body, NO_TOKEN, label)
      }
    })

    it('never lets an admin token open a customer route', async () => {
      const routes = t.server.app.routeTable.filter((r) => r.url.startsWith('/api/v2') && r.area !== 'public' && r.method !== 'HEAD')
      assert.ok(routes.length > 50)
      for (const r of routes) {
        const p = r.url.replace(/:[a-z_]+/g, '1')
        assert.deepEqual((await t.request(r.method, p, { key: token, body: {} })).body, NO_KEY, `${r.method} ${r.url}`)
        assert.deepEqual((await t.request(r.method, p, { headers: { authorization: `Bearer ${token}` }, body: {} })).body, NO_KEY, `${r.method} ${r.url}`)
      }
      assert.deepEqual((await t.request('GET', '/whoami', { key: token })).body, NO_KEY)
      assert.deepEqual((await t.request('GET', '/whoami', { headers: { authorization: `Bearer ${token}` } })).body, NO_KEY)
      assert.equal((await t.request('GET', '/whoami', { key: a.key })).status, 200)
    })

    it('creates, lists, finds, suspends and unsuspends accounts', async () => {
      const created = await adm('POST', '/accounts', { name: 'Acme B.V.', email: 'Owner@Acme.test', firstname: 'Ann', lastname: 'Owner', key: { label: 'ci' } })
      assert.equal(created.status, 200, created.text)
      assert.equal(created.body.status_description, 'Account created')
      const acme = created.body.data
      assert.equal(acme.name, 'Acme B.V.')
      assert.equal(acme.status, 'active')
      assert.equal(acme.users.length, 1)
      assert.equal(acme.users[0].is_main_user, true)
      assert.equal(acme.users[0].permissions.domains, true)
      assert.match(acme.api_key, /^[A-Za-z0-9]{40}$/)
      assert.equal(acme.keys[0].prefix, acme.api_key.slice(0, 8))
      assert.equal(acme.keys[0].label, 'ci')

      const who = await t.request('GET', '/whoami', { key: acme.api_key })
      assert.equal(who.body.data.customer_number, acme.customer_number)

      const dup = await adm('POST', '/accounts', { name: 'Again', email: 'owner@acme.test' })
      assert.deepEqual(dup.body, { status: 400, status_description: 'A user with this e-mail address already exists' })
      const bad = await adm('POST', '/accounts', { name: 'X', email: 'not-an-address' })
      assert.equal(bad.status, 400)

      const search = await adm('GET', '/accounts?search=ACME')
      assert.deepEqual(search.body.data.accounts.map((x: { customer_number: number }) => x.customer_number), [acme.customer_number])
      const byMail = await adm('GET', '/accounts?search=owner%40acme')
      assert.equal(byMail.body.data.pagination.total, 1)
      const page = await adm('GET', '/accounts?limit=1&page=2')
      assert.equal(page.body.data.accounts.length, 1)
      assert.equal(page.body.data.pagination.total_pages, page.body.data.pagination.total)
      assert.deepEqual((await adm('GET', '/accounts?page=99')).body, { status: 400, status_description: 'Page out of range' })

      const got = await adm('GET', `/accounts/${acme.customer_number}`)
      assert.equal(got.body.data.keys.length, 1)
      assert.equal(got.body.data.keys[0].last_used_ip, '127.0.0.1')
      assert.deepEqual((await adm('GET', '/accounts/999999')).body, { status: 404, status_description: 'Account not found' })

      const susp = await adm('PUT', `/accounts/${acme.customer_number}/suspend`)
      assert.equal(susp.body.data.status, 'suspended')
      assert.deepEqual((await t.request('GET', '/whoami', { key: acme.api_key })).body, NO_KEY)
      assert.equal((await adm('GET', '/accounts?status=suspended')).body.data.accounts[0].customer_number, acme.customer_number)
      const unsusp = await adm('PUT', `/accounts/${acme.customer_number}/unsuspend`)
      assert.equal(unsusp.body.data.status, 'active')
      assert.equal((await t.request('GET', '/whoami', { key: acme.api_key })).status, 200)
    })

    it('creates users and keys, sets whitelists and expiry, revokes keys', async () => {
      const cn = a.customerNumber
      const user = await adm('POST', `/accounts/${cn}/users`, { email: 'dns@tenant-a.test', firstname: 'Dana', permissions: ['domains'] })
      assert.equal(user.status, 200, user.text)
      assert.equal(user.body.data.is_main_user, false)
      assert.equal(user.body.data.permissions.domains, true)
      assert.equal(user.body.data.permissions.vps, false)

      const key = await adm('POST', `/accounts/${cn}/keys`, { user_id: user.body.data.id, label: 'dns', allowed_ips: ['127.0.0.1', '2001:db8::/32'] })
      assert.equal(key.status, 200, key.text)
      const k = key.body.data
      assert.deepEqual(k.allowed_ips, ['127.0.0.1', '2001:db8::/32'])
      assert.equal(k.user_id, user.body.data.id)
      assert.equal((await t.request('GET', '/whoami', { key: k.key })).status, 200)
      // The sub-user has no vps permission.
      assert.deepEqual((await t.request('GET', '/vps/ssh-keys', { key: k.key })).body, { status: 400, status_description: 'No access to this VPS' })

      const listed = await adm('GET', `/accounts/${cn}/keys`)
      assert.ok(listed.body.data.keys.some((x: { prefix: string }) => x.prefix === k.prefix))
      assert.ok(!JSON.stringify(listed.body).includes(k.key), 'the whole key is never listed')

      const wl = await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/whitelist`, { allowed_ips: ['192.0.2.0/24'] })
      assert.deepEqual(wl.body.data.allowed_ips, ['192.0.2.0/24'])
      assert.deepEqual((await t.request('GET', '/whoami', { key: k.key })).body,
        { status: 401, status_description: 'Remote IP address is not found in the API key whitelist (127.0.0.1)' })
      assert.deepEqual((await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/whitelist`, { allowed_ips: ['300.1.1.1'] })).body,
        { status: 400, status_description: 'Invalid IP address or CIDR range: 300.1.1.1' })
      await adm('PUT', `/accounts/${cn}/keys/${k.id}/whitelist`, { allowed_ips: [] })
      assert.equal((await t.request('GET', '/whoami', { key: k.key })).status, 200)

      const exp = await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/expiry`, { expires_at: '2001-01-01' })
      assert.equal(exp.body.data.expires_at, '2001-01-01T00:00:00.000Z')
      assert.deepEqual((await t.request('GET', '/whoami', { key: k.key })).body, { status: 401, status_description: 'API key has expired' })
      assert.deepEqual((await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/expiry`, { expires_at: 'soon' })).body,
        { status: 400, status_description: 'Invalid expires_at: use YYYY-MM-DD or an ISO 8601 time' })
      await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/expiry`, { expires_at: null })
      assert.equal((await t.request('GET', '/whoami', { key: k.key })).status, 200)

      const rev = await adm('DELETE', `/accounts/${cn}/keys/${k.prefix}`)
      assert.equal(rev.status, 200)
      assert.ok(rev.body.data.revoked_at)
      assert.deepEqual((await t.request('GET', '/whoami', { key: k.key })).body, NO_KEY)
      assert.deepEqual((await adm('DELETE', `/accounts/${cn}/keys/nosuchkey`)).body, { status: 404, status_description: 'API key not found' })

      // A key for a user of another account is refused like a missing user.
      const other = await t.account('Tenant Z')
      assert.deepEqual((await adm('POST', `/accounts/${cn}/keys`, { user_id: other.userId })).body, { status: 404, status_description: 'User not found' })
    })

    it('reads the audit log with filters and pages', async () => {
      const b = await t.account('Tenant B')
      const call = (key: string) => t.request('POST', '/vps/ssh-keys', { key, body: { name: 'x', public_key: sshKey() } })
      assert.equal((await call(a.key)).status, 200)
      assert.equal((await call(b.key)).status, 200)
      await t.request('POST', '/vps/ssh-keys', { key: b.key, body: { name: 'y' } })

      const mine = await adm('GET', `/audit?account=${b.customerNumber}`)
      assert.equal(mine.status, 200, mine.text)
      const entries = mine.body.data.entries as { customer_number: number; key_prefix: string; method: string; path: string; status: number }[]
      assert.equal(entries.length, 2)
      assert.ok(entries.every((e) => e.customer_number === b.customerNumber && e.key_prefix === b.key.slice(0, 8)))
      assert.deepEqual(entries.map((e) => e.status), [400, 200], 'newest first')
      assert.equal(entries[0].path, '/api/v2/vps/ssh-keys')

      assert.equal((await adm('GET', `/audit?account=${b.customerNumber}&status=400`)).body.data.entries.length, 1)
      assert.equal((await adm('GET', `/audit?key_prefix=${a.key.slice(0, 8)}&path=SSH-KEYS`)).body.data.entries.length, 1)
      assert.equal((await adm('GET', `/audit?account=${b.customerNumber}&limit=1`)).body.data.pagination.total_pages, 2)
      assert.equal((await adm('GET', `/audit?account=${b.customerNumber}&from=2999-01-01`)).body.data.entries.length, 0)
      assert.equal((await adm('GET', `/audit?account=${b.customerNumber}&to=2999-01-01`)).body.data.entries.length, 2)
      assert.equal((await adm('GET', '/audit?account=999999')).body.data.entries.length, 0)
      assert.equal((await adm('GET', '/audit?from=yesterday')).status, 400)

      // Admin calls are audited under the admin token's prefix.
      const prefix = token.slice(0, 12)
      await adm('PUT', `/accounts/${b.customerNumber}/suspend`)
      const byAdmin = await adm('GET', `/audit?key_prefix=${prefix}`)
      assert.ok(byAdmin.body.data.entries.some((e: { path: string; customer_number: number | null }) =>
        e.path === `/admin/v1/accounts/${b.customerNumber}/suspend` && e.customer_number === null))
    })

    it('inspects jobs and retries a failed one', async () => {
      let calls = 0
      const flaky = defineJob({
        name: 'test.flaky',
        payload: Type.Object({ n: Type.Integer() }),
        handle: async () => {
          calls++
          if (calls === 1) throw new Error('first attempt fails')
          return { ok: true }
        },
      })
      t.ctx.jobs.register(flaky)
      const id = await t.ctx.jobs.enqueue(flaky, { n: 1 }, { accountId: a.accountId, maxAttempts: 1 })
      await t.ctx.jobs.drain()
      const failed = await adm('GET', '/jobs?status=failed&kind=test.flaky')
      assert.equal(failed.status, 200, failed.text)
      assert.equal(failed.body.data.jobs.length, 1)
      const job = failed.body.data.jobs[0]
      assert.equal(job.id, id)
      assert.equal(job.last_error, 'first attempt fails')
      assert.deepEqual(job.payload, { n: 1 })
      assert.equal((await adm('GET', `/jobs?account=${a.customerNumber}&kind=test.flaky`)).body.data.jobs.length, 1)

      const retried = await adm('POST', `/jobs/${id}/retry`)
      assert.equal(retried.body.data.status, 'queued')
      assert.equal(retried.body.data.attempts, 0)
      assert.equal((await adm('POST', '/jobs/run')).body.data.jobs_run, 1)
      const done = await adm('GET', `/jobs/${id}`)
      assert.equal(done.body.data.status, 'done')
      assert.deepEqual(done.body.data.result, { ok: true })
      assert.deepEqual((await adm('POST', `/jobs/${id}/retry`)).body, { status: 400, status_description: 'Only a failed job can be retried (this one is done)' })
      assert.deepEqual((await adm('GET', '/jobs/999999')).body, { status: 404, status_description: 'Job not found' })
    })

    it('fails a job whose payload does not match its schema, without running the handler', async () => {
      let ran = 0
      const strict = defineJob({
        name: 'test.strict',
        payload: Type.Object({ n: Type.Integer() }),
        handle: async () => {
          ran++
        },
      })
      t.ctx.jobs.register(strict)
      // @ts-expect-error the payload's type follows from the definition's schema
      const id = await t.ctx.jobs.enqueue(strict, { n: 'one' }, { maxAttempts: 1 })
      await t.ctx.jobs.drain()
      const job = (await adm('GET', `/jobs/${id}`)).body.data
      assert.equal(job.status, 'failed')
      assert.equal(job.last_error, 'Invalid payload for job kind test.strict: /n: must be integer')
      assert.equal(ran, 0)
    })

    it('shows the mail outbox', async () => {
      await t.ctx.drivers.mail.send({ to: 'ann@tenant-a.test', subject: 'Hello', text: 'Body text', kind: 'test.hello', accountId: a.accountId })
      const list = await adm('GET', `/outbox?account=${a.customerNumber}&kind=test.hello`)
      assert.equal(list.status, 200, list.text)
      assert.equal(list.body.data.messages.length, 1)
      const m = list.body.data.messages[0]
      assert.equal(m.to, 'ann@tenant-a.test')
      assert.equal(m.subject, 'Hello')
      const one = await adm('GET', `/outbox/${m.id}`)
      assert.equal(one.body.data.text_body, 'Body text')
      assert.equal((await adm('GET', '/outbox?recipient=ANN@tenant-a.test')).body.data.pagination.total, 1)
      assert.deepEqual((await adm('GET', '/outbox/999999')).body, { status: 404, status_description: 'Message not found' })
    })

    it('serves Prometheus metrics that parse, with requests per operation and status and the job queue', async () => {
      const metricsJob = defineJob({ name: 'test.metrics', payload: Type.Null(), handle: async () => null })
      t.ctx.jobs.register(metricsJob)
      await t.ctx.jobs.enqueue(metricsJob, null)
      await t.ctx.jobs.drain()
      await t.request('GET', '/whoami', { key: a.key })
      await t.request('GET', '/whoami')
      const r = await adm('GET', '/metrics')
      assert.equal(r.status, 200)
      assert.match(String(r.headers['content-type']), /^text\/plain/)
      const samples = new Map<string, number>()
      for (const line of r.text.split('\n')) {
        if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue
        const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(line)
        assert.ok(m, `not a Prometheus sample line: ${line}`)
        samples.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]))
      }
      assert.ok((samples.get('hostapi_http_requests_total{operation="whoami",method="GET",status="200"}') ?? 0) >= 1)
      assert.ok((samples.get('hostapi_http_requests_total{operation="whoami",method="GET",status="401"}') ?? 0) >= 1)
      assert.ok([...samples.keys()].some((k) => k.startsWith('hostapi_http_request_duration_seconds_bucket{le="0.005",operation="whoami"')))
      assert.equal(samples.get('hostapi_jobs{kind="test.metrics",status="done"}'), 1)
    })

    it('answers /healthz and /readyz without a key', async () => {
      assert.deepEqual((await t.request('GET', '/healthz')).body, { status: 200, status_description: 'OK' })
      const ready = await t.request('GET', '/readyz')
      assert.deepEqual(ready.body, { status: 200, status_description: 'Ready', data: { database: 'ok', migrations: 'ok' } }, ready.text)
    })

    it('documents the admin API in its own OpenAPI document, hidden from the customer one', async () => {
      const doc = await t.request('GET', '/admin/v1/openapi.json')
      assert.equal(doc.status, 200)
      assert.equal(doc.body.openapi, '3.1.0')
      const ops = new Set<string>()
      for (const item of Object.values(doc.body.paths as Record<string, Record<string, { operationId: string }>>)) {
        for (const op of Object.values(item)) ops.add(op.operationId)
      }
      for (const id of ['adminCreateAccount', 'adminSuspendAccount', 'adminCreateKey', 'adminAuditLog', 'adminRetryJob', 'adminListOutbox', 'adminMetrics']) {
        assert.ok(ops.has(id), id)
      }
      assert.ok(doc.body.paths['/accounts/{customer_number}/keys/{key}/whitelist'].put.requestBody)
      const adminRoutes = t.server.app.routeTable.filter((r) => r.url.startsWith('/admin/v1') && r.method !== 'HEAD' && !r.url.endsWith('/openapi.json'))
      for (const r of adminRoutes) assert.ok(r.operationId && ops.has(r.operationId), `${r.method} ${r.url} is documented`)
      assert.equal(ops.size, adminRoutes.length, 'operationIds are unique')
      const customer = await t.request('GET', '/api/v2/openapi.json')
      assert.ok(!Object.keys(customer.body.paths).some((p) => p.startsWith('/admin')), 'no admin path in the customer document')
      assert.ok(!JSON.stringify(customer.body).includes('adminCreateAccount'))
    })

    it('answers and closes tickets as support', async () => {
      const opened = await t.request('POST', '/account/tickets', { key: a.key, body: { subject: 'DNS down', message: 'Help', department: 'support' } })
      assert.equal(opened.status, 200, opened.text)
      const n = opened.body.data.ticket_number
      const listed = await adm('GET', `/accounts/${a.customerNumber}/tickets`)
      assert.ok(listed.body.data.tickets.some((x: { ticket_number: number }) => x.ticket_number === n))

      const answer = await adm('POST', `/tickets/${n}/reply`, { message: '<p>Fixed <img src="x" onerror="alert(1)"></p>', author: 'Sam' })
      assert.equal(answer.status, 200, answer.text)
      assert.equal(answer.body.data.status, 'answered')
      const seen = await t.request('GET', `/account/tickets/${n}`, { key: a.key })
      const last = seen.body.data.thread.at(-1)
      assert.equal(last.from, 'support')
      assert.equal(last.author, 'Sam')
      assert.ok(!last.body.includes('img') && last.body.includes('Fixed'))
      await t.ctx.jobs.drain()
      const mail = await adm('GET', `/outbox?account=${a.customerNumber}&kind=ticket.answered`)
      assert.equal(mail.body.data.messages.length, 1)

      assert.deepEqual((await adm('PUT', `/tickets/${n}/close`)).body, { status: 200, status_description: 'Ticket closed' })
      assert.equal((await t.request('GET', `/account/tickets/${n}`, { key: a.key })).body.data.status, 'closed')
      assert.deepEqual((await adm('PUT', '/tickets/99999999/close')).body, { status: 404, status_description: 'Ticket not found' })
      const other = await t.account('Tenant T')
      assert.deepEqual((await adm('GET', `/accounts/${other.customerNumber}/tickets/${n}`)).body, { status: 404, status_description: 'Ticket not found' })
    })

    it('adds, approves, rejects and pays out commissions', async () => {
      const cn = a.customerNumber
      const add = (order: number) => adm('POST', `/accounts/${cn}/commissions`, { order_nr: order, sale_amount: 100, commission_amount: 12.5, sub_id: 'blog' })
      const c1 = (await add(5001)).body.data
      const c2 = (await add(5002)).body.data
      assert.equal(c1.approved, 0)
      assert.equal(c1.commission_amount, 12.5)
      assert.deepEqual((await adm('POST', `/accounts/${cn}/commissions/payout`, { reference: 'AFF-1' })).body,
        { status: 400, status_description: 'There is no approved, unpaid commission to pay out' })

      const approved = await adm('PUT', `/accounts/${cn}/commissions/${c1.id}/approve`)
      assert.equal(approved.body.data.approved, 1)
      const rejected = await adm('PUT', `/accounts/${cn}/commissions/${c2.id}/reject`, { reason: 'Order refunded' })
      assert.equal(rejected.status, 200, rejected.text)
      const seen = await t.request('GET', `/affiliate/commissions/${c2.id}`, { key: a.key })
      assert.equal(seen.body.data.rejection_reason, 'Order refunded')

      const paid = await adm('POST', `/accounts/${cn}/commissions/payout`, { reference: 'AFF-1' })
      assert.equal(paid.status, 200, paid.text)
      assert.equal(paid.body.data.amount, 12.5)
      assert.deepEqual(paid.body.data.commissions.map((c: { id: number }) => c.id), [c1.id])
      const payments = await t.request('GET', '/affiliate/payments', { key: a.key })
      assert.equal(payments.body.data.payments[0].reference, 'AFF-1')
      assert.deepEqual((await adm('PUT', `/accounts/${cn}/commissions/${c1.id}/reject`, { reason: 'late' })).body,
        { status: 400, status_description: 'A paid-out commission cannot be rejected' })
      const other = await t.account('Tenant C')
      assert.deepEqual((await adm('PUT', `/accounts/${other.customerNumber}/commissions/${c1.id}/approve`)).body,
        { status: 404, status_description: 'Commission not found' })
    })

    it('issues invoices and marks them paid', async () => {
      const cn = a.customerNumber
      const issued = await adm('POST', `/accounts/${cn}/invoices`, { lines: [{ description: 'Consultancy', amount: 150, quantity: 2 }, { description: 'Setup', amount: 25.5 }] })
      assert.equal(issued.status, 200, issued.text)
      const inv = issued.body.data
      assert.equal(inv.subtotal_price, 175.5)
      assert.equal(inv.paid, false)
      const seen = await t.request('GET', `/account/invoices/${inv.invoice_nr}`, { key: a.key })
      assert.equal(seen.body.data.total_price, inv.total_price)
      const paid = await adm('PUT', `/accounts/${cn}/invoices/${inv.invoice_nr}/paid`)
      assert.equal(paid.body.data.paid, true)
      assert.equal((await t.request('GET', `/account/invoices/${inv.invoice_nr}`, { key: a.key })).body.data.paid, true)
      assert.equal((await adm('GET', `/accounts/${cn}/invoices`)).body.data.invoices.length, 1)
      assert.deepEqual((await adm('PUT', `/accounts/${cn}/invoices/NOPE-1/paid`)).body, { status: 404, status_description: 'Invoice not found' })
    })

    it('sets extension prices and premium names that customers see', async () => {
      const set = await adm('PUT', '/extensions/.com', { register_price: 8.5, renew_price: 11, transfer_price: 7.25 })
      assert.equal(set.status, 200, set.text)
      assert.equal(set.body.data.register_price, '8.50')
      const seen = await t.request('GET', '/domains/extensions/com', { key: a.key })
      assert.deepEqual([seen.body.data.register_price, seen.body.data.renew_price, seen.body.data.transfer_price], ['8.50', '11.00', '7.25'])

      const added = await adm('PUT', '/extensions/example', { register_price: 1, renew_price: 2, transfer_price: 3, max_period: 5, supports_privacy: true })
      assert.equal(added.body.data.max_period, 5)
      assert.equal((await t.request('GET', '/domains/extensions/example', { key: a.key })).status, 200)
      assert.equal((await adm('DELETE', '/extensions/example')).status, 200)
      assert.deepEqual((await t.request('GET', '/domains/extensions/example', { key: a.key })).body, { status: 404, status_description: 'Extension not found' })
      assert.equal((await adm('PUT', '/extensions/bad_ext', { register_price: 1, renew_price: 1, transfer_price: 1 })).status, 400)

      const premium = await adm('PUT', '/premium-names/gold.com', { register_price: 2500, renew_price: 29.99 })
      assert.deepEqual(premium.body.data, { name: 'gold.com', register_price: 2500, renew_price: 29.99 })
      const avail = await t.request('GET', '/domains/availability/gold.com', { key: a.key })
      assert.equal(avail.body.data.is_premium, true)
      assert.ok((await adm('GET', '/premium-names')).body.data.premium_names.some((p: { name: string }) => p.name === 'gold.com'))
      await adm('DELETE', '/premium-names/gold.com')
      assert.equal((await t.request('GET', '/domains/availability/gold.com', { key: a.key })).body.data.is_premium, false)
      assert.deepEqual((await adm('DELETE', '/premium-names/gold.com')).body, { status: 404, status_description: 'Premium name not found' })

      const reserved = await adm('PUT', '/reserved-names/kept-name.nl', { reason: 'Registry policy' })
      assert.equal(reserved.status, 200, reserved.text)
      assert.equal(reserved.body.data.reason, 'Registry policy')
      assert.equal((await t.request('GET', '/domains/availability/kept-name.nl', { key: a.key })).body.data.status, 'unavailable')
      assert.deepEqual((await adm('GET', '/reserved-names')).body.data.reserved_names.map((r: { name: string }) => r.name), ['kept-name.nl'])
      assert.equal((await adm('DELETE', '/reserved-names/kept-name.nl')).status, 200)
      assert.equal((await t.request('GET', '/domains/availability/kept-name.nl', { key: a.key })).body.data.status, 'available')
      assert.deepEqual((await adm('DELETE', '/reserved-names/kept-name.nl')).body, { status: 404, status_description: 'Reserved name not found' })
      assert.equal((await adm('PUT', '/reserved-names/not a name', {})).status, 400)
    })

    it('lists the VPS images', async () => {
      const r = await adm('GET', '/vps/images')
      assert.equal(r.status, 200)
      assert.ok(r.body.data.images.length > 0)
      assert.deepEqual(Object.keys(r.body.data.images[0]).sort(), ['family', 'id', 'name', 'version'])
    })

    it('has no sandbox routes when sandbox mode is off', async () => {
      assert.deepEqual((await adm('POST', '/sandbox/reset')).body, { status: 404, status_description: 'Endpoint not found' })
    })
  })

  describe(`admin API on its own listener (${dialect})`, () => {
    let t: TestApp
    let token: string
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_ADMIN_PORT: '0', HOSTAPI_RATE_LIMIT: '2' } })
      token = (await t.ctx.services.admin.createToken()).token
    })
    after(() => t.close())

    it('serves the admin API only there, and counts rate-limit rejections', async () => {
      const origin = t.server.adminUrl.replace(/\/admin\/v1$/, '')
      assert.notEqual(origin, t.origin)
      const auth = { authorization: `Bearer ${token}` }
      assert.deepEqual((await t.request('GET', '/admin/v1/accounts', { headers: auth })).body, { status: 404, status_description: 'Endpoint not found' })
      const a = await t.account()
      for (let i = 0; i < 3; i++) await t.request('GET', '/whoami', { key: a.key })
      const list = await request(origin, 'GET', '/admin/v1/accounts', { headers: auth })
      assert.equal(list.status, 200, list.text)
      assert.equal(list.body.data.accounts[0].customer_number, a.customerNumber)
      assert.deepEqual((await request(origin, 'GET', '/admin/v1/accounts', { key: a.key })).body, NO_TOKEN)
      assert.equal((await request(origin, 'GET', '/readyz')).status, 200)
      assert.deepEqual((await request(origin, 'GET', '/api/v2/whoami', { key: a.key })).body, { status: 404, status_description: 'Endpoint not found' })
      assert.equal((await request(origin, 'PUT', `/admin/v1/accounts/${a.customerNumber}/suspend`, { headers: auth })).status, 200)
      const audit = await request(origin, 'GET', `/admin/v1/audit?key_prefix=${token.slice(0, 12)}`, { headers: auth })
      assert.equal(audit.body.data.entries[0].path, `/admin/v1/accounts/${a.customerNumber}/suspend`)
      const metrics = await request(origin, 'GET', '/admin/v1/metrics', { headers: auth })
      assert.match(metrics.text, /^hostapi_rate_limit_rejections_total\{operation="whoami"\} 1$/m)
    })
  })

  describe(`sandbox mode (${dialect})`, () => {
    let t: TestApp
    let token: string
    let dir: string
    const SEED_KEY = 'sandbox-acme-main-key-000000000001'
    const SUB_KEY = 'sandbox-acme-dns-key-0000000000002'
    const adm = (method: string, p: string, body?: unknown) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${token}` } })

    before(async () => {
      dir = tempDir()
      const seed = path.join(dir, 'seed.yaml')
      fs.writeFileSync(seed, [
        'accounts:',
        '  - name: Acme B.V.',
        '    email: owner@acme-sandbox.nl',
        '    keys:',
        `      - key: ${SEED_KEY}`,
        '        label: ci',
        '    users:',
        '      - email: dns@acme-sandbox.nl',
        '        permissions: [domains]',
        '        keys:',
        `          - key: ${SUB_KEY}`,
        '    domains:',
        '      - name: acme-sandbox.nl',
        '        renewal_date: "2030-01-15"',
        '        tags: [prod]',
        '        records:',
        '          - { type: A, name: "@", value: 192.0.2.10 }',
        '          - { type: TXT, name: _acme-challenge, value: token, ttl: 60 }',
        '  - name: Suspended Ltd',
        '    email: gone@suspended.test',
        '    status: suspended',
        '    keys:',
        '      - key: sandbox-suspended-key-000000000003',
        '',
      ].join('\n'))
      t = await startTestApp(dialect, { env: { HOSTAPI_SANDBOX: '1', HOSTAPI_SEED_FILE: seed, HOSTAPI_JOURNAL_SIZE: '5' } })
      token = (await t.ctx.services.admin.createToken()).token
    })
    after(async () => {
      await t.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    const seededDomain = async () => {
      const d = await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })
      if (d.status !== 200) return d.body
      const dns = await t.request('GET', '/domains/acme-sandbox.nl/dns', { key: SEED_KEY })
      return { renewal_date: d.body.data.renewal_date, tags: d.body.data.tags, is_locked: Boolean(d.body.data.is_locked), records: dns.body.data.records }
    }

    it('loads the seed file on an empty database: fixed keys, sub-users, suspended accounts, domains with records', async () => {
      const who = await t.request('GET', '/whoami', { key: SEED_KEY })
      assert.equal(who.status, 200)
      assert.equal(who.body.data.customer_number, 100001)
      assert.equal((await t.request('GET', '/whoami', { key: SUB_KEY })).status, 200)
      assert.deepEqual((await t.request('GET', '/vps/ssh-keys', { key: SUB_KEY })).body, { status: 400, status_description: 'No access to this VPS' })
      assert.deepEqual((await t.request('GET', '/whoami', { key: 'sandbox-suspended-key-000000000003' })).body, NO_KEY)
      assert.deepEqual(await seededDomain(), {
        renewal_date: '2030-01-15',
        tags: ['prod'],
        is_locked: false,
        records: [
          { type: 'A', name: 'acme-sandbox.nl.', value: '192.0.2.10', ttl: 3600 },
          { type: 'TXT', name: '_acme-challenge.acme-sandbox.nl.', value: 'token', ttl: 60 },
        ],
      })
      // The seeded name is registered, so nobody else can order it.
      const avail = await t.request('GET', '/domains/availability/acme-sandbox.nl', { key: SEED_KEY })
      assert.equal(avail.body.data.status, 'unavailable')
    })

    it('resets to the seed after changes through the customer API', async () => {
      assert.equal((await t.request('POST', '/vps/ssh-keys', { key: SEED_KEY, body: { name: 'laptop', public_key: sshKey() } })).status, 200)
      assert.equal((await t.request('GET', '/vps/ssh-keys', { key: SEED_KEY })).body.data.ssh_keys.length, 1)
      const extra = await adm('POST', '/accounts', { name: 'Late Ltd', email: 'late@late.test', key: {} })
      const lateKey = extra.body.data.api_key
      assert.equal((await t.request('GET', '/whoami', { key: lateKey })).status, 200)
      assert.equal((await t.request('PUT', '/domains/acme-sandbox.nl/dns', { key: SEED_KEY, body: { records: [] } })).status, 200)

      const reset = await adm('POST', '/sandbox/reset')
      assert.equal(reset.status, 200, reset.text)
      assert.deepEqual(reset.body, { status: 200, status_description: 'Sandbox reset', data: { accounts: 2, seed: 'file', demo_key: null } })

      assert.deepEqual((await t.request('GET', '/whoami', { key: lateKey })).body, NO_KEY)
      const who = await t.request('GET', '/whoami', { key: SEED_KEY })
      assert.equal(who.body.data.customer_number, 100001, 'customer numbers start again')
      assert.deepEqual((await t.request('GET', '/vps/ssh-keys', { key: SEED_KEY })).body.data.ssh_keys, [])
      assert.equal((await seededDomain()).records.length, 2)
      const accounts = await adm('GET', '/accounts')
      assert.deepEqual(accounts.body.data.accounts.map((x: { name: string }) => x.name), ['Acme B.V.', 'Suspended Ltd'])
    })

    it('moves the clock, runs the jobs that became due, and puts it back on reset', async () => {
      const before = await adm('GET', '/sandbox/clock')
      assert.equal(before.body.data.offset_seconds, 0)
      let ran = 0
      const later = defineJob({
        name: 'test.later',
        payload: Type.Null(),
        handle: async () => {
          ran++
        },
      })
      t.ctx.jobs.register(later)
      await t.ctx.jobs.enqueue(later, null, { runAt: new Date(t.ctx.clock.now().getTime() + 20 * 86_400_000) })
      const moved = await adm('POST', '/sandbox/clock', { advance: '30d' })
      assert.equal(moved.status, 200, moved.text)
      assert.equal(moved.body.data.offset_seconds, 30 * 86400)
      assert.equal(moved.body.data.jobs_run, 1)
      assert.equal(ran, 1)
      assert.ok(Math.abs(Date.parse(moved.body.data.now) - (Date.now() + 30 * 86_400_000)) < 60_000)
      assert.ok(Math.abs(t.ctx.clock.now().getTime() - Date.parse(moved.body.data.now)) < 60_000, 'the context clock moved')

      // Keys that expire inside the skipped time are expired now.
      const soon = await adm('POST', '/accounts/100001/keys', { expires_at: new Date(Date.now() + 86_400_000).toISOString() })
      assert.deepEqual((await t.request('GET', '/whoami', { key: soon.body.data.key })).body, { status: 401, status_description: 'API key has expired' })

      const to = await adm('POST', '/sandbox/clock', { to: '2031-06-01' })
      const drift = Date.parse(to.body.data.now) - Date.parse('2031-06-01T00:00:00Z')
      assert.ok(drift >= 0 && drift < 5000, 'the sandbox clock keeps running from the time it was set to')
      assert.deepEqual((await adm('POST', '/sandbox/clock', { advance: 'a month' })).body,
        { status: 400, status_description: 'Invalid advance: use a number and a unit, such as 30d, 12h, 15m or 45s' })
      assert.deepEqual((await adm('POST', '/sandbox/clock', {})).body, { status: 400, status_description: 'Set either advance or to' })

      await adm('POST', '/sandbox/reset')
      assert.equal((await adm('GET', '/sandbox/clock')).body.data.offset_seconds, 0)
    })

    it('ends a cancelled domain when the clock passes its renewal date', async () => {
      const cancel = await t.request('DELETE', '/domains/acme-sandbox.nl', { key: SEED_KEY })
      assert.equal(cancel.status, 200, cancel.text)
      assert.equal((await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })).status, 200, 'still there until the renewal date')
      const early = await adm('POST', '/sandbox/clock', { to: '2030-01-14T12:00:00Z' })
      assert.equal(early.body.data.jobs_run, 0)
      assert.equal((await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })).status, 200)
      const moved = await adm('POST', '/sandbox/clock', { advance: '1d' })
      assert.equal(moved.body.data.jobs_run, 1)
      const gone = await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })
      assert.deepEqual(gone.body, { status: 400, status_description: 'You have no access to this resource' })
      assert.equal((await t.request('GET', '/domains/availability/acme-sandbox.nl', { key: SEED_KEY })).body.data.status, 'available')

      await adm('POST', '/sandbox/reset')
      assert.equal((await seededDomain()).renewal_date, '2030-01-15', 'the reset brings the domain back')
    })

    it('injects faults by operation id: probability 1 and count 2 gives two injected answers, then the real one', async () => {
      const fault = await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 503, probability: 1, count: 2 })
      assert.equal(fault.status, 200, fault.text)
      assert.equal(fault.body.data.remaining, 2)
      const answers = []
      for (let i = 0; i < 3; i++) answers.push((await t.request('GET', '/whoami', { key: SEED_KEY })).body)
      assert.deepEqual(answers[0], { status: 503, status_description: 'Service unavailable' })
      assert.deepEqual(answers[1], { status: 503, status_description: 'Service unavailable' })
      assert.equal(answers[2].status, 200)
      assert.equal(answers[2].data.customer_number, 100001)
      assert.deepEqual((await adm('GET', '/sandbox/faults')).body.data.faults, [])

      // A fault never answers a call that fails authentication, and a text of one's own can be set.
      await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 500, status_description: 'Registry down', count: 1 })
      assert.deepEqual((await t.request('GET', '/whoami')).body, NO_KEY)
      assert.deepEqual((await t.request('GET', '/whoami', { key: SEED_KEY })).body, { status: 500, status_description: 'Registry down' })

      // A fault without a status only delays the real answer.
      await adm('POST', '/sandbox/faults', { operation: 'whoami', latency_ms: 5, count: 1 })
      assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).body.data.customer_number, 100001)
      assert.deepEqual((await adm('GET', '/sandbox/faults')).body.data.faults, [])

      const never = await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 500, probability: 0 })
      for (let i = 0; i < 5; i++) assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).status, 200)
      assert.equal((await adm('DELETE', `/sandbox/faults/${never.body.data.id}`)).status, 200)
      assert.deepEqual((await adm('DELETE', `/sandbox/faults/${never.body.data.id}`)).body, { status: 404, status_description: 'Fault not found' })

      assert.deepEqual((await adm('POST', '/sandbox/faults', { operation: 'noSuchOperation', status: 500 })).body,
        { status: 400, status_description: 'Unknown operation: noSuchOperation (use an operationId of the customer API)' })
      assert.equal((await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 418 })).status, 400)
    })

    it('keeps a journal of the last customer calls, readable and clearable', async () => {
      assert.equal((await adm('DELETE', '/sandbox/journal')).status, 200)
      await t.request('POST', '/vps/ssh-keys', { key: SEED_KEY, body: { name: 'journal', public_key: 'ssh-ed25519 nope' } })
      await t.request('GET', '/whoami', { key: SEED_KEY })
      const j = await adm('GET', '/sandbox/journal')
      assert.equal(j.status, 200, j.text)
      const entries = j.body.data.entries
      assert.equal(entries.length, 2, 'admin calls are not journalled')
      assert.equal(entries[0].method, 'POST')
      assert.equal(entries[0].path, '/api/v2/vps/ssh-keys')
      assert.equal(entries[0].operation, 'addSshKey')
      assert.equal(entries[0].status, 400)
      assert.deepEqual(entries[0].body, { name: 'journal', public_key: 'ssh-ed25519 nope' })
      assert.equal(entries[0].key_prefix, SEED_KEY.slice(0, 8))
      assert.equal(entries[1].path, '/api/v2/whoami')
      assert.equal(entries[1].status, 200)
      assert.equal((await adm('GET', '/sandbox/journal?limit=1')).body.data.entries[0].path, '/api/v2/whoami')

      for (let i = 0; i < 7; i++) await t.request('GET', '/whoami', { key: SEED_KEY })
      assert.equal((await adm('GET', '/sandbox/journal')).body.data.entries.length, 5, 'only the last HOSTAPI_JOURNAL_SIZE calls')
      await adm('DELETE', '/sandbox/journal')
      assert.deepEqual((await adm('GET', '/sandbox/journal')).body.data.entries, [])
    })

    it('journals a body nested thousands deep cut at depth 20, secrets below it included, and stays readable', async () => {
      await adm('DELETE', '/sandbox/journal')
      const rawBody = `{"name":${'['.repeat(5000)}${']'.repeat(5000)},"deep":${'{"a":'.repeat(25)}{"password":"hunter2"}${'}'.repeat(25)}}`
      const sent = await t.request('POST', '/vps/ssh-keys', { key: SEED_KEY, rawBody, headers: { 'content-type': 'application/json' } })
      assert.equal(sent.status, 400)
      const j = await adm('GET', '/sandbox/journal')
      assert.equal(j.status, 200, j.text)
      assert.doesNotMatch(j.text, /hunter2/)
      let name = j.body.data.entries[0].body.name
      for (let depth = 1; depth <= 20; depth++) name = name[0]
      assert.equal(name, '[nested too deep]')
      await adm('DELETE', '/sandbox/journal')
    })
  })

  describe(`seed files and a fixed admin token (${dialect})`, () => {
    it('loads the example seed file and accepts HOSTAPI_ADMIN_TOKEN', async () => {
      const seed = new URL('../examples/sandbox-seed.yaml', import.meta.url).pathname
      const token = 'adm_fixed-token-for-ci-000000000001'
      const t = await startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: seed, HOSTAPI_ADMIN_TOKEN: token } })
      try {
        const owner = 'sandbox-owner-key-00000000000000001'
        assert.equal((await t.request('GET', '/whoami', { key: owner })).status, 200)
        const dns = await t.request('GET', '/domains/example-sandbox.nl/dns', { key: 'sandbox-dns-bot-key-000000000000002' })
        assert.equal(dns.status, 200, dns.text)
        assert.equal(dns.body.data.records.length, 6)
        const list = await t.request('GET', '/domains', { key: owner })
        assert.deepEqual(list.body.data.domains.map((d: { domain: string }) => d.domain), ['example-sandbox.nl', 'example-staging.com'])
        assert.deepEqual((await t.request('GET', '/whoami', { key: 'sandbox-suspended-key-0000000000003' })).body, NO_KEY)
        const accounts = await t.request('GET', '/admin/v1/accounts', { headers: { authorization: `Bearer ${token}` } })
        assert.equal(accounts.body.data.pagination.total, 2)
      } finally {
        await t.close()
      }
    })

    it('gives a seed-file account the demo data of every area when asked', async () => {
      const dir = tempDir()
      const file = path.join(dir, 'seed.json')
      fs.writeFileSync(file, JSON.stringify({
        accounts: [{ name: 'Demo-like', email: 'demo-like@example.test', demo_data: true, keys: [{ key: 'sandbox-demo-like-key-00000000001' }], domains: [{ name: 'own-sandbox.nl' }] }],
      }))
      const t = await startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: file } })
      try {
        const key = 'sandbox-demo-like-key-00000000001'
        const domains = (await t.request('GET', '/domains', { key })).body.data.domains.map((d: { domain: string }) => d.domain)
        assert.ok(domains.includes('own-sandbox.nl') && domains.length > 1, domains.join(','))
        assert.ok((await t.request('GET', '/vps', { key })).body.data.vps.length > 0)
      } finally {
        await t.close()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })

    it('refuses to start with a seed file that breaks the rules, naming every problem', async () => {
      const dir = tempDir()
      try {
        const bad = path.join(dir, 'bad.json')
        fs.writeFileSync(bad, JSON.stringify({
          accounts: [{ name: 'X', email: 'x@x.test', keys: [{ key: 'short' }], domains: [{ name: 'not a domain' }], colour: 'red' }],
        }))
        await assert.rejects(startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: bad } }), (e: Error) => {
          assert.match(e.message, /^Invalid seed file .*bad\.json:/)
          assert.match(e.message, /keys\/0\/key/)
          return true
        })
        const record = path.join(dir, 'record.yaml')
        fs.writeFileSync(record, 'accounts:\n  - name: Y\n    email: y@y.test\n    domains:\n      - name: y-sandbox.nl\n        records:\n          - { type: A, name: www, value: not-an-ip }\n')
        await assert.rejects(startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: record } }), (e: Error) => {
          assert.match(e.message, /accounts\/0\/domains\/0 \(y-sandbox\.nl\): Invalid DNS record A www/)
          return true
        })
        await assert.rejects(startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: path.join(dir, 'missing.yaml') } }), /cannot read it/)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  })
})
