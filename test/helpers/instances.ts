import { startTestApp, type TestApp } from './app.js'
import type { Clock } from '../../src/clock.js'

/** Two instances of the app on one PostgreSQL schema: what several nodes behind a load balancer share. */
export interface Instances {
  one: TestApp
  two: TestApp
  /** Closes both instances (the second first), then drops the schema. */
  close(): Promise<void>
}

/**
 * Starts two instances on one fresh PostgreSQL schema (HOSTAPI_TEST_PG_URL). They share the Redis key prefix and,
 * with `redis`, the Redis of HOSTAPI_TEST_REDIS_URL. `env` applies to both, `envs` adds to each in turn.
 */
export async function twoInstances(
  opts: {
    env?: Record<string, string>
    envs?: [Record<string, string>, Record<string, string>]
    redis?: boolean
    clock?: Clock
  } = {},
): Promise<Instances> {
  // A generous Redis timeout: a machine busy with parallel tests must not trip the breaker (per-instance limits).
  const redis: Record<string, string> = opts.redis
    ? { REDIS_URL: process.env.HOSTAPI_TEST_REDIS_URL!, HOSTAPI_REDIS_TIMEOUT_MS: '1000' }
    : {}
  const shared = { ...redis, ...opts.env }
  const clock = opts.clock ? { clock: opts.clock } : {}
  const one = await startTestApp('postgres', { env: { ...shared, ...opts.envs?.[0] }, ...clock })
  let two: TestApp
  try {
    two = await startTestApp('postgres', { env: { ...shared, ...opts.envs?.[1] }, ...clock, shareDatabaseWith: one })
  } catch (err) {
    await one.close()
    throw err
  }
  return {
    one,
    two,
    async close() {
      try {
        await two.close()
      } finally {
        await one.close()
      }
    },
  }
}
