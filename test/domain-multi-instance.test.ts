import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp, type TestAccount, type TestApp } from './helpers/app.js'

const pgUrl = process.env.HOSTAPI_TEST_PG_URL
const redisUrl = process.env.HOSTAPI_TEST_REDIS_URL

describe('availability checks on two instances sharing PostgreSQL and Redis', { skip: !pgUrl || !redisUrl ? 'needs HOSTAPI_TEST_PG_URL and HOSTAPI_TEST_REDIS_URL' : false }, () => {
  let one: TestApp
  let two: TestApp
  let a: TestAccount
  before(async () => {
    // A generous Redis timeout: a machine busy with parallel tests must not trip the breaker (per-instance limits).
    const env = { REDIS_URL: redisUrl!, HOSTAPI_REDIS_TIMEOUT_MS: '1000', HOSTAPI_AVAILABILITY_RATE_LIMIT: '3' }
    one = await startTestApp('postgres', { env })
    two = await startTestApp('postgres', { env, shareDatabaseWith: one })
    a = await one.account()
  })
  after(async () => {
    await two.close()
    await one.close()
  })

  it('share one availability budget per account', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await (i % 2 ? two : one).request('GET', `/domains/availability/shared-${i}.com`, { key: a.key })).status)
    assert.deepEqual(statuses, [200, 200, 200, 429])
    // The general per-key budget is untouched by it.
    assert.equal((await two.request('GET', '/domains', { key: a.key })).status, 200)
  })
})
