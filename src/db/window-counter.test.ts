import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import pino from 'pino'
import { ManualClock } from '../clock.js'
import { redisGuard } from '../../test/helpers/redis.js'
import { openRedis, RedisGuard } from './redis.js'
import { MemoryWindowCounter, RedisWindowCounter, type WindowCounter } from './window-counter.js'
import { answerCounts, SharedWindowCounter } from './shared-window-counter.js'

const redisUrl = process.env.HOSTAPI_TEST_REDIS_URL
const log = pino({ level: 'silent' })

/** The counter of a worker of `serve --workers N`, its primary's answers delivered as the IPC channel would. */
function sharedThroughPrimary(clock: ManualClock): WindowCounter {
  const primary = new MemoryWindowCounter(clock)
  const listeners: ((message: unknown) => void)[] = []
  return new SharedWindowCounter({
    send: (message) => {
      const answer = structuredClone(answerCounts(primary, structuredClone(message)))
      setImmediate(() => {
        for (const l of listeners) l(answer)
      })
    },
    onMessage: (listener) => listeners.push(listener),
  })
}

const implementations: { name: string; make: (clock: ManualClock) => Promise<WindowCounter> }[] = [
  { name: 'memory', make: async (clock) => new MemoryWindowCounter(clock) },
  { name: 'shared through the primary', make: async (clock) => sharedThroughPrimary(clock) },
  ...(redisUrl
    ? [
        {
          name: 'redis',
          make: async (clock: ManualClock) => {
            const guard = await redisGuard(redisUrl, { timeoutMs: 1000, retryMs: 1000 })
            assert.equal(guard.redis.status, 'ready')
            return new RedisWindowCounter(
              guard,
              clock,
              `hostapi-test:${process.pid}:${randomBytes(4).toString('hex')}:`,
            )
          },
        },
      ]
    : []),
]

// One contract both counters keep: a fixed window opened by the first hit and timed by the app's clock.
for (const { name, make } of implementations) {
  describe(`window counter contract (${name})`, () => {
    it('opens a window at the first hit, counts hits in it, and peeks without counting', async () => {
      const clock = new ManualClock()
      const c = await make(clock)
      assert.deepEqual(await c.peek('a', 10_000), { current: 0, ttl: 0 })
      assert.deepEqual(await c.hit('a', 10_000), { current: 1, ttl: 10_000 })
      clock.advance(4_000)
      const second = await c.hit('a', 10_000)
      assert.equal(second.current, 2)
      assert.ok(second.ttl <= 6_000 && second.ttl > 5_000, `ttl ${second.ttl}`)
      assert.equal((await c.peek('a', 10_000)).current, 2)
      assert.equal((await c.peek('a', 10_000)).current, 2)
      assert.deepEqual(await c.peek('b', 10_000), { current: 0, ttl: 0 })
    })

    it('counts several hits at once, the first of them opening the window', async () => {
      const clock = new ManualClock()
      const c = await make(clock)
      assert.deepEqual(await c.hit('n', 10_000, 5), { current: 5, ttl: 10_000 })
      const [one, more] = await Promise.all([c.hit('n', 10_000), c.hit('n', 10_000, 3)])
      assert.deepEqual([one.current, more.current], [6, 9])
      assert.equal((await c.peek('n', 10_000)).current, 9)
    })

    it('ends the window on the app clock and starts a new one at the next hit', async () => {
      const clock = new ManualClock()
      const c = await make(clock)
      for (let i = 0; i < 3; i++) await c.hit('k', 60_000)
      clock.advance(60_000)
      assert.deepEqual(await c.peek('k', 60_000), { current: 0, ttl: 0 })
      assert.deepEqual(await c.hit('k', 60_000), { current: 1, ttl: 60_000 })
    })

    it('starts over when the clock is set back before the window began', async () => {
      const clock = new ManualClock()
      const c = await make(clock)
      await c.hit('k', 60_000)
      await c.hit('k', 60_000)
      clock.advance(-3_600_000)
      assert.deepEqual(await c.peek('k', 60_000), { current: 0, ttl: 0 })
      assert.deepEqual(await c.hit('k', 60_000), { current: 1, ttl: 60_000 })
    })
  })
}

describe('memory window counter', () => {
  it('keeps a bounded number of keys, closed windows going first', async () => {
    const clock = new ManualClock()
    const c = new MemoryWindowCounter(clock)
    await c.hit('old', 1_000)
    clock.advance(2_000)
    for (let i = 0; i < 100_000; i++) c.hitNow(`k${i}`, 60_000)
    assert.equal(c.peekNow('old', 1_000).current, 0)
    c.hitNow('one-more', 60_000)
    assert.equal(c.peekNow('one-more', 60_000).current, 1)
    assert.equal(c.peekNow('k99999', 60_000).current, 1)
  })
})

describe('redis window counter, one call per key and turn', {
  skip: !redisUrl && 'HOSTAPI_TEST_REDIS_URL is not set',
}, () => {
  it('sends the hits and peeks of a key asked in one turn as one call; each caller gets the count of its own hit', async () => {
    const clock = new ManualClock()
    const c = (await implementations.find((i) => i.name === 'redis')!.make(clock)) as RedisWindowCounter
    const before = c.calls
    const asked = [
      c.peek('k', 60_000),
      ...Array.from({ length: 30 }, () => c.hit('k', 60_000)),
      c.peek('k', 60_000),
      c.hit('other', 60_000),
    ]
    const counts = await Promise.all(asked)
    assert.equal(c.calls - before, 2)
    assert.deepEqual(
      counts.map((n) => n.current),
      [0, ...Array.from({ length: 30 }, (_, i) => i + 1), 30, 1],
    )
    assert.deepEqual(counts[0], { current: 0, ttl: 0 })
    assert.equal(counts[1].ttl, 60_000)
    // The next turn's hits continue the same window, in Redis.
    const next = await Promise.all([c.hit('k', 60_000), c.hit('k', 60_000)])
    assert.deepEqual(
      next.map((n) => n.current),
      [31, 32],
    )
  })
})

describe('redis window counter without redis', () => {
  it('counts in memory when redis does not answer', async () => {
    const opts = { timeoutMs: 50, retryMs: 1000 }
    // Port 1 on loopback: nothing listens, every command fails at once.
    const guard = new RedisGuard(openRedis('redis://127.0.0.1:1', opts, log), opts, log)
    try {
      const c = new RedisWindowCounter(guard, new ManualClock(), 'x:')
      for (let i = 1; i <= 5; i++) assert.equal((await c.hit('k', 60_000)).current, i)
      assert.equal((await c.peek('k', 60_000)).current, 5)
      assert.equal(await guard.health(), 'degraded')
    } finally {
      guard.close()
      guard.redis.disconnect()
    }
  })
})
