import fc from 'fast-check'

/** Hostile values for the HTTP fuzz test (test/fuzz.test.ts): strings, numbers, wrong types, and values made
   from a route's schemas. */

export type Schema = {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  format?: string
  pattern?: string
  default?: unknown
}

export const HUGE = 'x'.repeat(100_001)
export const hostileStrings = [
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '\u2028\u2029',
  '\u00a0',
  '\u3000',
  '\u200b',
  '\ufeff',
  'é',
  'Ｅｘａｍｐｌｅ',
  '😀',
  '例え.jp',
  '..',
  '../../etc/passwd',
  '%00',
  '%zz',
  '<script>alert(1)</script>',
  "' or 1=1 --",
  '"; drop table accounts; --',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal template-injection probe, not meant to interpolate
  '${7*7}',
  '{{7*7}}',
  'NaN',
  'Infinity',
  '-1',
  '1e20',
  '0x10',
  'null',
  'true',
  '*',
  '.',
  '-',
  'a'.repeat(256),
  'a.'.repeat(200),
  HUGE,
  `${'\ud800'.repeat(50)}`,
  'xn--',
  'xn--zz',
  '\\',
  '\r\n\r\nX: y',
]
export const hostileNumbers = [
  0,
  -0,
  -1,
  1.5,
  -1.5,
  0.1,
  1e20,
  -1e20,
  2 ** 31,
  2 ** 53,
  2 ** 63,
  Number.MAX_VALUE,
  5e-324,
  1e308,
]
export const wrongTypes: unknown[] = [null, true, false, [], {}, [1, 2], { a: 1 }, 'string', 123, [null], [{}], [[]]]

export const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
)
export const hostileNumber = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...hostileNumbers) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer() },
)
export const anyHostile: fc.Arbitrary<unknown> = fc.oneof(hostileString, hostileNumber, fc.constantFrom(...wrongTypes))

export const typeOf = (s: Schema): string | undefined => (Array.isArray(s.type) ? s.type[0] : s.type)

/** A plausible value for a schema: what a client would send, before mutation. */
export function plausible(s: Schema | undefined, depth = 0): unknown {
  if (!s) return 'x'
  if (s.const !== undefined) return s.const
  if (s.enum?.length) return s.enum[0]
  if (s.default !== undefined) return s.default
  const alt = s.anyOf ?? s.oneOf
  if (alt?.length) return plausible(alt.find((a) => typeOf(a) !== 'null') ?? alt[0], depth)
  switch (typeOf(s)) {
    case 'object': {
      const out: Record<string, unknown> = {}
      if (depth > 4) return out
      for (const k of s.required ?? []) out[k] = plausible(s.properties?.[k], depth + 1)
      return out
    }
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => plausible(s.items, depth + 1))
    case 'integer':
    case 'number':
      return s.minimum ?? 1
    case 'boolean':
      return false
    case 'null':
      return null
    default:
      if (s.format === 'email') return 'fuzz@example.com'
      if (s.format === 'date') return '2026-01-01'
      if (s.format === 'date-time') return '2026-01-01T00:00:00Z'
      if (s.format === 'ipv4') return '192.0.2.1'
      return 'x'.repeat(Math.max(1, s.minLength ?? 1))
  }
}

/** Fragments spliced into a plausible string: separators, quotes, Unicode spaces and controls, lone surrogates. */
export const fragments = [
  '\u0000',
  '\ud800',
  '\udc00',
  '\u3000',
  '\u00a0',
  '\u2028',
  '\u2029',
  '\u200b',
  '\ufeff',
  '\u0085',
  '\u1680',
  '\u2003',
  '\u000b',
  '\u000c',
  '\t',
  '\n',
  '\r',
  '\r\n',
  ' ',
  ';',
  '"',
  "'",
  '\\',
  '(',
  ')',
  '.',
  '..',
  '@',
  '*',
  '$ORIGIN',
  '$INCLUDE /etc/passwd',
  '%',
  'é',
  '😀',
  '\u0301',
  'ǅ',
  'İ',
  'ß',
  '<',
  '>',
  '&',
  '\u001b[31m',
  'x'.repeat(1000),
]
export const splice = (base: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc.tuple(fc.nat(base.length), fc.constantFrom(...fragments)).map(([i, f]) => base.slice(0, i) + f + base.slice(i)),
    fc
      .tuple(fc.nat(base.length), fc.constantFrom(...fragments))
      .map(([i, f]) => base.slice(0, i) + f.repeat(50) + base.slice(i)),
    fc.constantFrom(
      base.repeat(Math.ceil(100_001 / Math.max(1, base.length))),
      base.toUpperCase(),
      ` ${base} `,
      `${base}.`,
      base.slice(1),
    ),
  )

/**
 * A hostile value for a schema: the wrong type, an edge of its own type, or `base` (the value a client would
 * send) mutated: a fragment spliced into a string, one element of an array or one property of an object changed.
 */
export function hostile(s: Schema | undefined, depth = 0, base: unknown = plausible(s)): fc.Arbitrary<unknown> {
  const alt = s?.anyOf ?? s?.oneOf
  if (alt?.length && depth < 3)
    return fc.oneof(anyHostile, ...alt.filter((a) => typeOf(a) !== 'null').map((a) => hostile(a, depth + 1)))
  const t = s ? typeOf(s) : undefined
  const own: fc.Arbitrary<unknown>[] = [anyHostile]
  if (t === 'string' || t === undefined) own.push(hostileString)
  if (typeof base === 'string') own.push(splice(base), splice(base))
  if (t === 'integer' || t === 'number') own.push(hostileNumber)
  if (s?.enum?.length)
    own.push(
      fc.constantFrom(
        ...s.enum.map((v) => (typeof v === 'string' ? `${v} ` : v)),
        ...s.enum.map((v) => (typeof v === 'string' ? v.toUpperCase() : v)),
      ),
    )
  if (depth < 4 && t === 'object' && s?.properties) {
    const obj =
      base !== null && typeof base === 'object' && !Array.isArray(base)
        ? (base as Record<string, unknown>)
        : (plausible(s) as Record<string, unknown>)
    own.push(mutateObject(s, obj, depth + 1), mutateObject(s, obj, depth + 1))
  }
  if (depth < 4 && t === 'array') {
    const arr = Array.isArray(base) && base.length ? base : [plausible(s?.items)]
    own.push(fc.array(hostile(s?.items, depth + 1), { maxLength: 3 }))
    own.push(
      fc
        .nat(arr.length - 1)
        .chain((i) => hostile(s?.items, depth + 1, arr[i]).map((v) => arr.map((x, j) => (j === i ? v : x)))),
    )
    own.push(
      fc
        .nat(arr.length - 1)
        .chain((i) => hostile(s?.items, depth + 1, arr[i]).map((v) => arr.map((x, j) => (j === i ? v : x)))),
    )
    own.push(fc.constant(Array.from({ length: 2000 }, () => arr[0])))
  }
  return fc.oneof(...own)
}

/** An object with one property mutated, removed, or one added; or the whole value replaced. */
export function mutateObject(s: Schema, base: Record<string, unknown>, depth = 0): fc.Arbitrary<unknown> {
  const names = [...new Set([...Object.keys(s.properties ?? {}), ...Object.keys(base)])]
  const choices: fc.Arbitrary<unknown>[] = [
    anyHostile,
    fc.constant([base]),
    fc
      .record({ extra: fc.constantFrom('__proto__', 'constructor', 'zz_unknown', ''), value: anyHostile })
      .map(({ extra, value }) => ({ ...base, [extra]: value })),
  ]
  if (names.length) {
    choices.push(
      fc
        .constantFrom(...names)
        .chain((name) =>
          fc.oneof(
            fc.constant({ name, remove: true as const, value: undefined as unknown }),
            hostile(s.properties?.[name], depth, name in base ? base[name] : plausible(s.properties?.[name])).map(
              (value) => ({ name, remove: false as const, value }),
            ),
          ),
        )
        .map(({ name, remove, value }) => {
          const out: Record<string, unknown> = { ...base }
          if (remove) delete out[name]
          else out[name] = value
          return out
        }),
    )
    choices.push(choices[choices.length - 1], choices[choices.length - 1])
  }
  return fc.oneof(...choices)
}
