import fc from 'fast-check'
import type { RouteEntry } from '../../src/http/route-table.js'
import type { FixtureResult } from './fixtures.js'
import { hostile, mutateObject, plausible, type Schema, typeOf } from './fuzz-values.js'

/** The requests the HTTP fuzz test (test/fuzz.test.ts) sends to one operation. */

export interface Case {
  kind: 'valid' | 'body' | 'raw' | 'param' | 'query'
  params: Record<string, string>
  query: string
  body?: unknown
  raw?: string | Buffer
  contentType?: string
  /** A `Content-Encoding` header (bodies are read uncompressed only). */
  encoding?: string
  noKey: boolean
  /** An `Idempotency-Key` header (ordering routes store and replay answers by it). */
  idempotencyKey?: string
  note: string
}

// Not '': an empty segment is another URL (the list route), answered by another operation.
export const hostileSegments = [
  '%20',
  '..',
  '.',
  '%2e%2e',
  '%00',
  'a%00b',
  '%',
  '%zz',
  '%E2%82',
  '%C0%AF',
  '%ED%A0%80',
  '%FF%FE',
  '%C3%A9',
  '%F0%9F%98%80',
  '%E4%BE%8B%E3%81%88.jp',
  '-1',
  '0',
  '1.5',
  '1e20',
  '99999999999999999999',
  'NaN',
  'null',
  '%27',
  '%22',
  '%20or%201%3D1',
  'a'.repeat(100),
  'a'.repeat(101),
  'a'.repeat(1000),
  '%C3%A9'.repeat(60),
  'Infinity',
  '-Infinity',
  '1e999',
  '..%2f..%2fetc',
  '%2F',
  '%5C',
  '%3Cscript%3E',
  '*',
  '~',
  '%E2%80%A8',
]
export const hostileParam = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...hostileSegments) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map((x) => encodeURIComponent(x)),
  },
)
export const hostileQueryValue = fc.oneof(
  fc.constantFrom(
    '',
    '-1',
    '0',
    '1.5',
    '1e20',
    '-1e20',
    'NaN',
    'Infinity',
    '-Infinity',
    '1e999',
    'true',
    '[]',
    '{}',
    '%00',
    '%zz',
    '%',
    '%C3%A9',
    '%ED%A0%80',
    'x'.repeat(4000),
    '1&page=2',
    '99999999999999999999',
    '0x10',
    '%20',
    '+',
  ),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map((x) => encodeURIComponent(x)),
)
export const rawBodies: { raw: string | Buffer; note: string }[] = [
  { raw: '{', note: 'truncated JSON' },
  { raw: '{"a":', note: 'truncated JSON' },
  { raw: 'NaN', note: 'NaN literal' },
  { raw: '{"a": NaN}', note: 'NaN in object' },
  { raw: '[1,]', note: 'trailing comma' },
  { raw: "{'a':1}", note: 'single quotes' },
  { raw: 'null', note: 'null body' },
  { raw: '"string"', note: 'string body' },
  { raw: '12', note: 'number body' },
  { raw: '[]', note: 'array body' },
  { raw: '\u0000', note: 'NUL body' },
  { raw: Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0x7b, 0x7d]), note: 'invalid UTF-8' },
  { raw: Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), note: 'BOM + {}' },
  { raw: '['.repeat(20_000), note: 'deep nesting' },
  { raw: `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`, note: 'deep array' },
  { raw: '{"__proto__":{"polluted":1}}', note: 'proto pollution' },
  { raw: '{"a":1,"a":2}', note: 'duplicate keys' },
  { raw: ' \n ', note: 'whitespace body' },
  { raw: `"${'x'.repeat(1_100_000)}"`, note: 'over the 1 MiB body limit' },
]

export function casesFor(r: RouteEntry, base: FixtureResult, count: number, seed: number): Case[] {
  const s = r.schema ?? {}
  const bodySchema = s.body as Schema | undefined
  const paramNames = Object.keys(base.params)
  const queryProps = Object.keys((s.querystring as Schema | undefined)?.properties ?? {})
  const hasBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method)
  const baseBody = base.body ?? (bodySchema ? plausible(bodySchema) : undefined)
  const start = (kind: Case['kind'], note: string, noKey: boolean): Case => ({
    kind,
    params: { ...base.params },
    query: '',
    body: baseBody,
    noKey,
    note,
  })

  const kinds: fc.Arbitrary<Case>[] = []
  const noKey = fc.nat(9).map((n) => n === 0)
  if (bodySchema) {
    const mutated =
      typeOf(bodySchema) === 'object'
        ? mutateObject(bodySchema, (baseBody ?? {}) as Record<string, unknown>)
        : hostile(bodySchema)
    const bodyCase = fc.tuple(mutated, noKey).map(([body, nk]) => ({ ...start('body', 'mutated body', nk), body }))
    kinds.push(bodyCase, bodyCase, bodyCase, bodyCase)
  }
  if (hasBody) {
    const encodings = fc.constantFrom<string | undefined>(
      undefined,
      undefined,
      undefined,
      'identity',
      'gzip',
      'br, gzip',
      'x-\u00e9',
    )
    kinds.push(
      fc
        .tuple(
          fc.constantFrom(...rawBodies),
          fc.constantFrom(
            'application/json',
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=utf-16',
          ),
          encodings,
          noKey,
        )
        .map(([b, ct, enc, nk]) => ({
          ...start('raw', `raw body: ${b.note} as ${ct}${enc ? ` (${enc})` : ''}`, nk),
          body: undefined,
          raw: b.raw,
          contentType: ct,
          encoding: enc,
        })),
    )
  }
  const numeric = baseBody !== undefined ? JSON.stringify(baseBody) : ''
  if (/:-?\d/.test(numeric)) {
    // JSON.parse reads 1e999 as Infinity: a number no JSON.stringify can send.
    const raw = fc
      .tuple(
        fc.constantFrom('1e999', '-1e999', '1e-999', '-0.0', '1.0000000000000000001', '123456789012345678901234567890'),
        noKey,
      )
      .map(([n, nk]) => ({
        ...start('raw', `number ${n} in the body`, nk),
        body: undefined,
        raw: numeric.replace(/:-?\d[\d.eE+-]*/, `:${n}`),
      }))
    kinds.push(raw, raw)
  }
  if (paramNames.length) {
    const paramCase = fc.tuple(fc.constantFrom(...paramNames), hostileParam, noKey).map(([name, value, nk]) => {
      const c = start('param', `path :${name} = ${value.slice(0, 60)}`, nk)
      c.params[name] = value
      return c
    })
    kinds.push(paramCase, paramCase, paramCase)
  }
  const queryCase = fc
    .tuple(fc.constantFrom(...queryProps, 'zz_unknown', 'page', 'limit'), hostileQueryValue, fc.boolean(), noKey)
    .map(([name, value, twice, nk]) => {
      const c = start('query', `query ${name}=${value.slice(0, 60)}${twice ? ' (twice)' : ''}`, nk)
      c.query = `?${name}=${value}${twice ? `&${name}=${value}` : ''}`
      return c
    })
  kinds.push(queryCase, queryCase)
  // A tenth of the requests with a body carry an Idempotency-Key: a few fixed ones (so a repeat with another
  // body meets a stored answer) and hostile ones.
  const idem = fc.option(
    fc.constantFrom('fuzz-key-1', 'fuzz-key-2', '', ' ', 'a'.repeat(256), 'a b', '\u00e9', 'x'.repeat(255)),
    { freq: 9 },
  )
  const all = fc
    .tuple(fc.oneof(...kinds), idem)
    .map(([c, key]) =>
      hasBody && key !== null
        ? { ...c, idempotencyKey: key, note: `${c.note}, Idempotency-Key ${JSON.stringify(key.slice(0, 20))}` }
        : c,
    )
  const cases = [start('valid', 'fixture request', false), ...fc.sample(all, { seed, numRuns: Math.max(0, count - 1) })]
  return cases
}
