import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ownerOrderKey } from './owner-order.js'
import { sortRecords } from './zone-file.js'

// Labels as names are stored, with the characters that sort around each other: `*`, `-`, `_`, digits, letters.
const label = fc.string({
  unit: fc.constantFrom('a', 'b', 'z', '0', '9', '-', '_', '*', 'A'),
  minLength: 1,
  maxLength: 4,
})

describe('ownerOrderKey', () => {
  it('orders owner names as sortRecords does, code unit by code unit', () => {
    fc.assert(
      fc.property(
        // The apex as stored: lower case.
        fc.array(label, { minLength: 1, maxLength: 3 }).map((l) => l.join('.').toLowerCase()),
        fc.array(
          fc.oneof(
            fc.constant(''),
            fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join('.')),
            // Not below the apex at all: cut as sortRecords cuts it.
            label,
          ),
          { maxLength: 12 },
        ),
        (apex, below) => {
          const records = below.map((b, i) => ({
            name: b === '' ? apex : b.includes('.') || i % 2 ? `${b}.${apex}` : b,
            type: 'A',
            i,
          }))
          const byKey = records
            .map((r) => ({ r, k: ownerOrderKey(apex, r.name) }))
            .sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : x.r.i - y.r.i))
            .map((x) => x.r)
          assert.deepEqual(byKey, sortRecords(apex, records))
        },
      ),
      { numRuns: 500 },
    )
  })
})
