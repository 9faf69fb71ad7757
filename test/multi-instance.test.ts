import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { twoInstances } from './helpers/instances.js'
import { PRUNE_JOB } from '../src/jobs/maintenance.js'
import { eventually } from './helpers/wait.js'

if (process.env.CI && !process.env.HOSTAPI_TEST_REDIS_URL)
  throw new Error('CI must provide Redis: set HOSTAPI_TEST_REDIS_URL')

// Two instances on one PostgreSQL database and one Redis: what several nodes behind a load balancer share.
describeWithEnv(
  ['HOSTAPI_TEST_PG_URL', 'HOSTAPI_TEST_REDIS_URL'],
  'two instances on one PostgreSQL and one Redis',
  () => {
    let one: TestApp
    let two: TestApp
    let a: TestAccount
    let close: () => Promise<void>
    before(async () => {
      const env = {
        HOSTAPI_RATE_LIMIT: '5',
        HOSTAPI_JOBS: '1',
        HOSTAPI_JOB_POLL_MS: '10',
        HOSTAPI_JOB_CONCURRENCY: '2',
      }
      ;({ one, two, close } = await twoInstances({ redis: true, env }))
      a = await one.account()
    })
    after(() => close())

    it('share one rate limit', async () => {
      const statuses: number[] = []
      for (let i = 0; i < 6; i++)
        statuses.push((await (i % 2 ? two : one).request('GET', '/whoami', { key: a.key })).status)
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429])
      assert.equal((await two.request('GET', '/whoami', { key: a.key })).headers['ratelimit-remaining'], '0')
    })

    it('see a key revoked or a permission withdrawn on the other instance at once', async () => {
      // The lookup cache lives long here; only the announcement between instances can make the change visible.
      const env = { HOSTAPI_AUTH_CACHE_MS: '60000' }
      const three = await startTestApp('postgres', { env, shareDatabaseWith: one })
      const four = await startTestApp('postgres', { env, shareDatabaseWith: one })
      try {
        const acc = await three.account()
        const sub = await three.subUser(acc, { domains: true })
        const key = await three.ctx.services.iam.createKey(acc.accountId, acc.userId)
        assert.equal((await four.request('GET', '/whoami', { key: key.key })).status, 200)
        assert.equal((await four.request('GET', '/domains', { key: sub.key })).status, 200)
        await three.ctx.services.iam.revokeKey(acc.accountId, String(key.id))
        await three.ctx.services.users.update(
          {
            accountId: acc.accountId,
            customerNumber: acc.customerNumber,
            userId: acc.userId,
            isMainUser: true,
            permissions: {},
            keyId: 0,
            keyPrefix: '',
          },
          sub.userId,
          { permissions: { domains: false } },
        )
        const seen = async () =>
          (await four.request('GET', '/whoami', { key: key.key })).status === 401 &&
          (await four.request('GET', '/domains', { key: sub.key })).status === 403
        await eventually(seen, {
          what: 'the other instance refuses the revoked key and the withdrawn permission',
          timeoutMs: 5000,
          intervalMs: 20,
        })
      } finally {
        await four.close()
        await three.close()
      }
    })

    it('share Idempotency-Key: a repeat on the other instance answers the first order again, charged once', async () => {
      const acc = await one.account()
      const headers = { 'idempotency-key': 'multi-instance-order-1' }
      const body = { product_id: 1, duration: 1 }
      const first = await one.request('POST', '/certificates/order', { key: acc.key, body, headers })
      assert.equal(first.status, 200, first.text)
      const again = await two.request('POST', '/certificates/order', { key: acc.key, body, headers })
      assert.equal(again.text, first.text)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      const other = await two.request('POST', '/certificates/order', {
        key: acc.key,
        body: { product_id: 1, duration: 2 },
        headers,
      })
      assert.deepEqual(other.body, {
        status: 409,
        status_description: 'Idempotency key reused with a different request',
      })
      const orders = await one.ctx.db
        .selectFrom('orders')
        .select('id')
        .where('account_id', '=', acc.accountId)
        .execute()
      assert.deepEqual(
        orders.map((o) => o.id),
        [first.body.data.order_id],
      )
    })

    it('share one job queue, and each job runs once', async () => {
      const before = await one.ctx.db.selectFrom('jobs').select('id').where('kind', '=', PRUNE_JOB).execute()
      const ids: number[] = []
      const prune = one.ctx.maintenance.pruneJob
      for (let i = 0; i < 40; i++)
        ids.push(await (i % 2 ? two : one).ctx.jobs.enqueue(prune, null, { trx: one.ctx.db }))
      const done = await eventually(
        async () => {
          const rows = await one.ctx.db
            .selectFrom('jobs')
            .select(['id', 'status', 'attempts', 'locked_by'])
            .where('id', 'in', ids)
            .execute()
          return rows.every((j) => j.status === 'done') && rows
        },
        { what: 'the 40 jobs are done', timeoutMs: 20_000 },
      )
      assert.equal(done.length, 40)
      for (const j of done) {
        assert.equal(j.status, 'done')
        assert.equal(j.attempts, 1, `job ${j.id} was claimed ${j.attempts} times`)
        assert.ok([one.ctx.jobs.workerId, two.ctx.jobs.workerId].includes(j.locked_by!))
      }
      // A run queues no follow-up of itself: the next run is the schedule's (its key), not the job's.
      const after = await one.ctx.db.selectFrom('jobs').select('id').where('kind', '=', PRUNE_JOB).execute()
      assert.equal(after.length, before.length + 40)
    })
  },
)
