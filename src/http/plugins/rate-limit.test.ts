// The per-key budget over a shared counter (Redis): counted at once while well below its max, exact near it, and
// shared between instances (two budgets on one Redis stand for two instances).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { systemClock } from '../../clock.js'
import { RedisWindowCounter, type WindowCount } from '../../db/window-counter.js'
import { type Budget, budget } from './rate-limit.js'
import { redisGuard } from '../../../test/helpers/redis.js'
import { eventually } from '../../../test/helpers/wait.js'

const redisUrl = process.env.HOSTAPI_TEST_REDIS_URL

/** `n` instances' counters on one Redis, under one fresh prefix. */
async function instances(n: number): Promise<RedisWindowCounter[]> {
  const prefix = `hostapi-test:${process.pid}:${randomBytes(4).toString('hex')}:`
  const counters = []
  for (let i = 0; i < n; i++) {
    const guard = await redisGuard(redisUrl ?? '', { timeoutMs: 2000, retryMs: 1000 })
    counters.push(new RedisWindowCounter(guard, systemClock, prefix))
  }
  return counters
}

const hit = (b: Budget, key: string) => new Promise<WindowCount>((resolve) => b.hit(key, resolve))

/** Hits `b` one request at a time until one is refused or `limit` were admitted; the counts of those admitted. */
async function untilRefused(b: Budget, key: string, limit: number): Promise<number[]> {
  const admitted = []
  for (let i = 0; i < limit; i++) {
    const count = await hit(b, key)
    if (count.current > b.max) break
    admitted.push(count.current)
  }
  return admitted
}

describe('a budget over Redis', { skip: !redisUrl && 'HOSTAPI_TEST_REDIS_URL is not set' }, () => {
  it('admits exactly its max from one instance, most of it without a call to Redis each', async () => {
    const [counter] = await instances(1)
    const b = budget(counter, 1000, 60_000)
    const calls = counter.calls
    const counts = await untilRefused(b, 'rl:key:1', 2000)
    assert.equal(counts.length, 1000)
    assert.deepEqual(
      counts,
      counts.map((_, i) => i + 1),
      'each request sees the count its own hit made',
    )
    assert.ok(counter.calls - calls < 500, `${counter.calls - calls} calls for 1000 requests`)
    // The hits counted at once reach Redis with the next send (every 10 ms).
    await eventually(async () => (await counter.peek('rl:key:1', 60_000)).current === 1001, {
      what: 'every hit reached Redis',
    })
  })

  it('shares the max between instances: a second instance admits what the first left', async () => {
    const [one, two] = await instances(2)
    const a = budget(one, 1000, 60_000)
    const b = budget(two, 1000, 60_000)
    assert.equal((await untilRefused(a, 'rl:key:2', 600)).length, 600)
    // Past the time a count heard stays good: the first instance asks Redis again at its next request.
    await sleep(100)
    assert.equal((await untilRefused(b, 'rl:key:2', 1000)).length, 400)
    // The same for the first instance, whose last count (600) is now too old to decide on.
    await sleep(100)
    assert.deepEqual(await untilRefused(a, 'rl:key:2', 10), [], 'the first instance refuses as well')
  })

  it('waits for Redis at every request of a small budget', async () => {
    const [counter] = await instances(1)
    const b = budget(counter, 50, 60_000)
    const calls = counter.calls
    assert.equal((await untilRefused(b, 'rl:key:3', 100)).length, 50)
    assert.equal(counter.calls - calls, 51)
  })
})
