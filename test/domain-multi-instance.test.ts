import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, type TestAccount, type TestApp } from './helpers/app.js'
import { twoInstances } from './helpers/instances.js'

describeWithEnv(
  ['HOSTAPI_TEST_PG_URL', 'HOSTAPI_TEST_REDIS_URL'],
  'availability checks on two instances sharing PostgreSQL and Redis',
  () => {
    let one: TestApp
    let two: TestApp
    let a: TestAccount
    let close: () => Promise<void>
    before(async () => {
      ;({ one, two, close } = await twoInstances({ redis: true, env: { HOSTAPI_AVAILABILITY_RATE_LIMIT: '3' } }))
      a = await one.account()
    })
    after(() => close())

    it('share one availability budget per account', async () => {
      const statuses: number[] = []
      for (let i = 0; i < 4; i++)
        statuses.push(
          (await (i % 2 ? two : one).request('GET', `/domains/availability/shared-${i}.com`, { key: a.key })).status,
        )
      assert.deepEqual(statuses, [200, 200, 200, 429])
      // The general per-key budget is untouched by it.
      assert.equal((await two.request('GET', '/domains', { key: a.key })).status, 200)
    })
  },
)
