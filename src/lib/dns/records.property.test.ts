// Property tests of the linear TXT helpers: on any text they give what the former per-character code gave
// (kept here as the reference), and the zone-file record checks keep their answers on zones with many records at a name.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ApiError } from '../../errors.js'
import { splitQuotedStrings, txtChunks } from './records.js'
import { parseZone } from './zone-file.js'

const runs = (n: number) => ({ seed: 20261127, numRuns: n })

/** The former txtChunks: one Buffer per character. */
function referenceTxtChunks(text: string): Buffer[] {
  const out: Buffer[] = []
  let cur: Buffer[] = []
  let len = 0
  for (const ch of text) {
    const b = Buffer.from(ch, 'utf8')
    if (len + b.length > 255) {
      out.push(Buffer.concat(cur))
      cur = []
      len = 0
    }
    cur.push(b)
    len += b.length
  }
  if (len > 0 || out.length === 0) out.push(Buffer.concat(cur))
  return out
}

/** The former splitQuotedStrings: the bytes gathered one character at a time. */
function referenceSplitQuotedStrings(value: string): string | null {
  const s = value.trim()
  if (!s.startsWith('"')) return null
  const bytes: number[] = []
  const push = (ch: string) => bytes.push(...Buffer.from(ch, 'utf8'))
  let i = 0
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i]!)) i++
    if (i >= s.length) break
    if (s[i] !== '"') return null
    i++
    let closed = false
    while (i < s.length) {
      const c = String.fromCodePoint(s.codePointAt(i)!)
      if (c === '\\') {
        const d = /^\d{3}/.exec(s.slice(i + 1, i + 4))
        if (d && Number(d[0]) <= 255) {
          bytes.push(Number(d[0]))
          i += 4
        } else {
          if (i + 1 >= s.length) return null
          const next = String.fromCodePoint(s.codePointAt(i + 1)!)
          push(next)
          i += 1 + next.length
        }
        continue
      }
      if (c === '"') {
        closed = true
        i++
        break
      }
      push(c)
      i += c.length
    }
    if (!closed) return null
  }
  return Buffer.from(bytes).toString('utf8')
}

/** Any UTF-16 unit (lone surrogates included), multi-byte characters and the quoting characters often. */
const unit = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom('"', '\\', ' ', '\t', '1', '2', '5', '9', 'é', '€', '😀', '\ud800', '\udc00'),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom('\\195', '\\169', '\\226\\130', '\\255', '\\256', '\\00', '\\"') },
)
const text = (maxLength: number) => fc.array(unit, { maxLength }).map((u) => u.join(''))

describe('txtChunks', () => {
  it('equals the per-character chunking on any text', () => {
    fc.assert(
      fc.property(text(700), (t) => {
        assert.deepEqual(
          txtChunks(t).map((b) => b.toString('hex')),
          referenceTxtChunks(t).map((b) => b.toString('hex')),
        )
      }),
      runs(2000),
    )
  })

  it('cuts only at character starts, in chunks of at most 255 bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 1500 }), (t) => {
        const chunks = txtChunks(t)
        assert.ok(chunks.every((c) => c.length <= 255))
        assert.equal(chunks.map((c) => c.toString('utf8')).join(''), Buffer.from(t).toString('utf8'))
      }),
      runs(500),
    )
  })
})

describe('splitQuotedStrings', () => {
  it('equals the per-character unescaping on any text', () => {
    fc.assert(
      fc.property(text(60), (t) => {
        assert.equal(splitQuotedStrings(t), referenceSplitQuotedStrings(t))
        assert.equal(splitQuotedStrings(`"${t}"`), referenceSplitQuotedStrings(`"${t}"`))
        assert.equal(splitQuotedStrings(`"${t}" "${t}"`), referenceSplitQuotedStrings(`"${t}" "${t}"`))
      }),
      runs(3000),
    )
  })
})

describe('parseZone on many records at one name', () => {
  it('names the line of the CNAME that another record at its name contradicts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 }), (before, after) => {
        const lines = [
          ...Array.from({ length: before }, (_, i) => `x TXT "b${i}"`),
          'x CNAME target.example.net.',
          ...Array.from({ length: after }, (_, i) => `x TXT "a${i}"`),
        ]
        const firstBad = before > 0 ? before + 1 : after > 0 ? 2 : 0
        try {
          parseZone('example.nl', lines.join('\n'))
          assert.equal(firstBad, 0)
        } catch (err) {
          assert.ok(err instanceof ApiError)
          assert.equal(
            err.message,
            `Invalid zone file: line ${firstBad}: ${before > 0 ? 'CNAME' : 'TXT'} x.example.nl: a CNAME must be the only record at its name (see line 1)`,
          )
        }
      }),
      runs(300),
    )
  })
})
