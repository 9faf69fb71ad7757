import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, type TestAccount, type TestApp } from './helpers/app.js'
import { sshKey, startAdminTestApp } from './helpers/admin.js'
import { Type } from 'typebox'
import { defineJob } from '../src/jobs/runner.js'

forEachDialect((dialect) => {
  describe(`admin API: audit log, jobs, mail outbox, metrics (${dialect})`, () => {
    let t: TestApp
    let token: string
    let a: TestAccount
    const adm = (method: string, p: string, body?: unknown, tok = token) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${tok}` } })

    before(async () => {
      ;({ t, token, a } = await startAdminTestApp(dialect))
    })
    after(() => t.close())

    it('reads the audit log with filters and pages', async () => {
      const b = await t.account('Tenant B')
      const call = (key: string) =>
        t.request('POST', '/vps/ssh-keys', { key, body: { name: 'x', public_key: sshKey() } })
      assert.equal((await call(a.key)).status, 200)
      assert.equal((await call(b.key)).status, 200)
      await t.request('POST', '/vps/ssh-keys', { key: b.key, body: { name: 'y' } })

      const mine = await adm('GET', `/audit?account=${b.customerNumber}`)
      assert.equal(mine.status, 200, mine.text)
      const entries = mine.body.data.entries as {
        customer_number: number
        key_prefix: string
        method: string
        path: string
        status: number
      }[]
      assert.equal(entries.length, 2)
      assert.ok(entries.every((e) => e.customer_number === b.customerNumber && e.key_prefix === b.key.slice(0, 8)))
      assert.deepEqual(
        entries.map((e) => e.status),
        [400, 200],
        'newest first',
      )
      assert.equal(entries[0].path, '/api/v2/vps/ssh-keys')

      assert.equal((await adm('GET', `/audit?account=${b.customerNumber}&status=400`)).body.data.entries.length, 1)
      assert.equal(
        (await adm('GET', `/audit?key_prefix=${a.key.slice(0, 8)}&path=SSH-KEYS`)).body.data.entries.length,
        1,
      )
      assert.equal((await adm('GET', `/audit?account=${b.customerNumber}&limit=1`)).body.data.pagination.total_pages, 2)
      assert.equal((await adm('GET', `/audit?account=${b.customerNumber}&from=2999-01-01`)).body.data.entries.length, 0)
      assert.equal((await adm('GET', `/audit?account=${b.customerNumber}&to=2999-01-01`)).body.data.entries.length, 2)
      assert.equal((await adm('GET', '/audit?account=999999')).body.data.entries.length, 0)
      assert.equal((await adm('GET', '/audit?from=yesterday')).status, 400)

      // Admin calls are audited under the admin token's prefix.
      const prefix = token.slice(0, 12)
      await adm('PUT', `/accounts/${b.customerNumber}/suspend`)
      const byAdmin = await adm('GET', `/audit?key_prefix=${prefix}`)
      assert.ok(
        byAdmin.body.data.entries.some(
          (e: { path: string; customer_number: number | null }) =>
            e.path === `/admin/v1/accounts/${b.customerNumber}/suspend` && e.customer_number === null,
        ),
      )
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
      const id = await t.ctx.jobs.enqueue(flaky, { n: 1 }, { trx: t.ctx.db, accountId: a.accountId, maxAttempts: 1 })
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
      assert.deepEqual((await adm('POST', `/jobs/${id}/retry`)).body, {
        status: 400,
        status_description: 'Only a failed job can be retried (this one is done)',
      })
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
      const id = await t.ctx.jobs.enqueue(strict, { n: 'one' }, { trx: t.ctx.db, maxAttempts: 1 })
      await t.ctx.jobs.drain()
      const job = (await adm('GET', `/jobs/${id}`)).body.data
      assert.equal(job.status, 'failed')
      assert.equal(job.last_error, 'Invalid payload for job kind test.strict: /n: must be integer')
      assert.equal(ran, 0)
    })

    it('shows the mail outbox', async () => {
      await t.ctx.drivers.mail.send({
        to: 'ann@tenant-a.test',
        subject: 'Hello',
        text: 'Body text',
        kind: 'test.hello',
        accountId: a.accountId,
      })
      const list = await adm('GET', `/outbox?account=${a.customerNumber}&kind=test.hello`)
      assert.equal(list.status, 200, list.text)
      assert.equal(list.body.data.messages.length, 1)
      const m = list.body.data.messages[0]
      assert.equal(m.to, 'ann@tenant-a.test')
      assert.equal(m.subject, 'Hello')
      assert.equal(m.status, 'stored')
      assert.equal(m.status_detail, null)
      const one = await adm('GET', `/outbox/${m.id}`)
      assert.equal(one.body.data.text_body, 'Body text')
      assert.equal((await adm('GET', '/outbox?recipient=ANN@tenant-a.test')).body.data.pagination.total, 1)
      assert.deepEqual((await adm('GET', '/outbox/999999')).body, {
        status: 404,
        status_description: 'Message not found',
      })
    })

    it('serves Prometheus metrics that parse, with requests per operation and status and the job queue', async () => {
      const metricsJob = defineJob({ name: 'test.metrics', payload: Type.Null(), handle: async () => null })
      t.ctx.jobs.register(metricsJob)
      await t.ctx.jobs.enqueue(metricsJob, null, { trx: t.ctx.db })
      await t.ctx.jobs.drain()
      await t.request('GET', '/whoami', { key: a.key })
      await t.request('GET', '/whoami')
      const r = await adm('GET', '/metrics')
      assert.equal(r.status, 200)
      assert.match(String(r.headers['content-type']), /^text\/plain/)
      const samples = new Map<string, number>()
      for (const line of r.text.split('\n')) {
        if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue
        const m =
          /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(
            line,
          )
        assert.ok(m, `not a Prometheus sample line: ${line}`)
        samples.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]))
      }
      assert.ok((samples.get('hostapi_http_requests_total{operation="whoami",method="GET",status="200"}') ?? 0) >= 1)
      assert.ok((samples.get('hostapi_http_requests_total{operation="whoami",method="GET",status="401"}') ?? 0) >= 1)
      assert.ok(
        [...samples.keys()].some((k) =>
          k.startsWith('hostapi_http_request_duration_seconds_bucket{le="0.005",operation="whoami"'),
        ),
      )
      assert.equal(samples.get('hostapi_jobs{kind="test.metrics",status="done"}'), 1)
    })
  })
})
