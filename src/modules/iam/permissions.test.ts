import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { isPermission, parsePermissions, permissionMap, PERMISSIONS } from './permissions.js'

const known = [...PERMISSIONS].sort()
const dangerous = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf']

/** Keys a client or an old row may hold: known names, prototype names and anything else. */
const key = fc.oneof(fc.constantFrom(...PERMISSIONS), fc.constantFrom(...dangerous), fc.string({ maxLength: 20 }))
const value = fc.oneof(
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.string({ maxLength: 5 }),
  fc.object({ maxDepth: 1 }),
)
/** JSON text of an object with those keys, written out so `__proto__` stays an own key as JSON.parse makes it. */
const storedText = fc.oneof(
  fc
    .array(fc.tuple(key, value), { maxLength: 30 })
    .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`),
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    'null',
    '[]',
    '"x"',
    '1',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
  ),
)

describe('permission maps', () => {
  it("knows only the specification's names, nothing inherited", () => {
    for (const p of PERMISSIONS) assert.equal(isPermission(p), true)
    for (const d of dangerous) assert.equal(isPermission(d), false)
  })

  it('reads any stored text as a map of exactly the known names to booleans, never touching a prototype', () => {
    fc.assert(
      fc.property(storedText, (text) => {
        const map = parsePermissions(text)
        assert.equal(Object.getPrototypeOf(map), Object.prototype)
        assert.deepEqual(Object.keys(map).sort(), known)
        for (const p of PERMISSIONS) assert.equal(typeof map[p], 'boolean')
        assert.equal(({} as Record<string, unknown>).polluted, undefined)
      }),
      { seed: 20261123, numRuns: 500 },
    )
  })

  it('builds a map from overrides with the known names only, a known name taking its own boolean value', () => {
    fc.assert(
      fc.property(storedText, fc.boolean(), (text, base) => {
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          return
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return
        const overrides = parsed as Record<string, boolean>
        const map = permissionMap(base, overrides)
        assert.equal(Object.getPrototypeOf(map), Object.prototype)
        assert.deepEqual(Object.keys(map).sort(), known)
        for (const p of PERMISSIONS) {
          const own = Object.hasOwn(overrides, p) && typeof overrides[p] === 'boolean'
          assert.equal(map[p], own ? overrides[p] : base, p)
        }
      }),
      { seed: 20261123, numRuns: 500 },
    )
  })
})
