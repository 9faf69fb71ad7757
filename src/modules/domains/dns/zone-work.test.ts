import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ApiError } from '../../../errors.js'
import { DEFAULT_ZONE_LIMITS, ZoneWork } from './zone-work.js'

const zone = 'example.nl'
const text = Array.from({ length: 200 }, (_, i) => `h${i} 300 IN TXT "${'x'.repeat(100)}"`).join('\n')

describe('zone work in the pool', () => {
  it('lets one account have one large task at a time, and another account its own', { timeout: 60_000 }, async () => {
    // Every text goes to the pool; the queue is large enough that only the per-account bound can refuse.
    const work = new ZoneWork({ ...DEFAULT_ZONE_LIMITS, inlineBytes: 0, queue: 10, perAccount: 1 })
    try {
      const first = work.parse(1, zone, text)
      // Counted before the first task has even reached a worker: the refusal does not depend on timing.
      const second = work.parse(1, zone, text)
      const other = work.parse(2, zone, text)
      await assert.rejects(
        second,
        (err: unknown) => err instanceof ApiError && err.status === 429 && err.headers?.['retry-after'] === '5',
      )
      assert.equal((await first).length, 200)
      assert.equal((await other).length, 200)
      // Once its task is done, the account may send the next one.
      assert.equal((await work.parse(1, zone, text)).length, 200)
    } finally {
      await work.close()
    }
  })

  it('keeps small inputs inline, outside the per-account bound', async () => {
    const work = new ZoneWork({ ...DEFAULT_ZONE_LIMITS, perAccount: 1 })
    try {
      const small = 'www 300 IN A 192.0.2.1\n'
      const all = await Promise.all([work.parse(1, zone, small), work.parse(1, zone, small)])
      assert.deepEqual(
        all.map((r) => r.length),
        [1, 1],
      )
    } finally {
      await work.close()
    }
  })
})
