import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ApiError } from '../errors.js'
import { jsonShape, parseJsonBody } from './json-body.js'

/** The nesting depth of a parsed value: 0 for a scalar, one more per array or object around it. */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0
  const children = Array.isArray(v) ? v : Object.values(v)
  return 1 + children.reduce<number>((m, c) => Math.max(m, depthOf(c)), 0)
}

/** Values in a parsed value, containers included. */
function countOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 1
  const children = Array.isArray(v) ? v : Object.values(v)
  return 1 + children.reduce<number>((n, c) => n + countOf(c), 0)
}

// Strings made of the characters the scanner must not read as structure: brackets, quotes, backslashes, commas.
const tricky = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', ':', 'a', ' ', '\n', '\u2028') })
const trickyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tricky,
    fc.integer(),
    fc.constantFrom(null, true, false),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
  ),
})).value
const anyJson = fc.oneof(fc.jsonValue(), trickyJson)
const layout = fc.constantFrom<(v: unknown) => string>(
  (v) => JSON.stringify(v),
  (v) => JSON.stringify(v, null, 2),
  (v) => ` \n${JSON.stringify(v, null, '\t')}\r\n`,
)

describe('jsonShape', () => {
  it('reads the depth JSON.parse gives, for any JSON value in any layout, strings with brackets and escapes included', () => {
    fc.assert(
      fc.property(anyJson, layout, (v, show) => {
        const text = show(v)
        assert.equal(jsonShape(text).depth, depthOf(JSON.parse(text)))
      }),
      { numRuns: 2000 },
    )
  })

  it('counts at least every value but the first, and no more than containers plus members', () => {
    fc.assert(
      fc.property(anyJson, (v) => {
        const { values } = jsonShape(JSON.stringify(v))
        assert.ok(values + 1 >= countOf(v), `${values} for ${countOf(v)}`)
        assert.ok(values <= 2 * countOf(v))
      }),
    )
  })

  it('stops past stopDepth and still tells that the text is deeper', () => {
    fc.assert(
      fc.property(anyJson, fc.nat(6), (v, stop) => {
        const deep = depthOf(v)
        const got = jsonShape(JSON.stringify(v), stop).depth
        if (deep > stop) assert.equal(got, stop + 1)
        else assert.equal(got, deep)
      }),
    )
  })

  it('reads brackets only outside strings', () => {
    assert.equal(jsonShape(JSON.stringify({ a: '[[[[{{{{\\"' })).depth, 1)
    assert.equal(jsonShape('["\\\\", [[]]]').depth, 3)
    assert.equal(jsonShape('["\\"[[[", 1]').depth, 1)
    assert.equal(jsonShape('"unterminated [[[').depth, 0)
    assert.equal(jsonShape('['.repeat(100_000)).depth, 100_000)
  })
})

describe('parseJsonBody', () => {
  const refused = (text: string, limits: Parameters<typeof parseJsonBody>[1]) => {
    try {
      parseJsonBody(text, limits)
    } catch (err) {
      assert.ok(err instanceof ApiError)
      return `${err.kind} ${err.message}`
    }
    return 'parsed'
  }

  it('parses any JSON value within the depth as JSON.parse does, and refuses deeper ones with a 400 before parsing', () => {
    fc.assert(
      fc.property(anyJson, fc.integer({ min: 1, max: 6 }), (v, maxDepth) => {
        const text = JSON.stringify(v)
        if (depthOf(v) > maxDepth)
          assert.equal(
            refused(text, { maxDepth }),
            `bad_request Invalid JSON body: nested deeper than ${maxDepth} levels`,
          )
        else if (!text.includes('\\u0000')) assert.deepEqual(parseJsonBody(text, { maxDepth }), JSON.parse(text))
      }),
    )
  })

  it('refuses nesting far past what JSON.parse or a structured clone survive with a 400, valid or not', () => {
    for (const text of [
      '['.repeat(1_000_000),
      `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
      `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`,
    ])
      assert.equal(refused(text, { maxDepth: 64 }), 'bad_request Invalid JSON body: nested deeper than 64 levels')
    assert.equal(refused(`${'['.repeat(64)}${']'.repeat(64)}`, { maxDepth: 64 }), 'parsed')
  })

  it('refuses more values than maxValues with a 413', () => {
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i])))
    assert.equal(refused(many, { maxDepth: 64, maxValues: 1000 }), 'payload_too_large Request body too large')
    assert.equal(refused(JSON.stringify({ zone: 'x,'.repeat(100_000) }), { maxDepth: 64, maxValues: 1000 }), 'parsed')
  })
})
