import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import https from 'node:https'
import fc from 'fast-check'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { dialects, startTestApp, type TestAccount, type TestApp, type Reply } from './helpers/app.js'
import type { Dialect } from '../src/db/database.js'
import { fixtures, type FixtureResult } from './helpers/fixtures.js'
import { ADMIN_PREFIX, API_PREFIX } from '../src/http/constants.js'
import { declaredErrorStatuses } from '../src/http/error-responses.js'
import { ErrorBody, Pagination } from '../src/http/schemas.js'
import { FAULT_STATUSES } from '../src/errors.js'
import type { RouteEntry } from '../src/http/route-table.js'
import { orderedOperations } from './helpers/routes.js'

/*
 * HTTP fuzzing of every operation of the customer and admin APIs, generated from the route table and the
 * routes' own schemas: malformed and hostile bodies, path parameters and query strings, with a valid key
 * (so requests reach validation and the services) and, for a fraction, without one. Every answer must be
 * the envelope as application/json, never 5xx, with a status the operation declares and a body valid
 * against the schema it declares for that status; the server must still answer afterwards.
 *
 * FUZZ_RUNS=N sends about N requests in all (default: FUZZ_PER_OPERATION per operation);
 * FUZZ_SEED=S varies the seed (fixed by default, so `npm test` is repeatable); FUZZ_REPORT=file writes every
 * failing answer to that file; FUZZ_ALL_DIALECTS=1 runs on PostgreSQL too; FUZZ_LOG=error shows
 * the server's log; FUZZ_TRACE=file appends every request to that file before it is sent.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261123)
const FUZZ_PER_OPERATION = 24

/** Operations not fuzzed, with the reason. */
const SKIPPED: { method: string; url: string; reason: string }[] = []

// ---------------------------------------------------------------------------------------------------
// Hostile values.

type Schema = {
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

const HUGE = 'x'.repeat(100_001)
const hostileStrings = [
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
const hostileNumbers = [
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
const wrongTypes: unknown[] = [null, true, false, [], {}, [1, 2], { a: 1 }, 'string', 123, [null], [{}], [[]]]

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
)
const hostileNumber = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...hostileNumbers) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer() },
)
const anyHostile: fc.Arbitrary<unknown> = fc.oneof(hostileString, hostileNumber, fc.constantFrom(...wrongTypes))

const typeOf = (s: Schema): string | undefined => (Array.isArray(s.type) ? s.type[0] : s.type)

/** A plausible value for a schema: what a client would send, before mutation. */
function plausible(s: Schema | undefined, depth = 0): unknown {
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
const fragments = [
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
const splice = (base: string): fc.Arbitrary<string> =>
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
function hostile(s: Schema | undefined, depth = 0, base: unknown = plausible(s)): fc.Arbitrary<unknown> {
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
function mutateObject(s: Schema, base: Record<string, unknown>, depth = 0): fc.Arbitrary<unknown> {
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

// ---------------------------------------------------------------------------------------------------
// Cases.

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
const hostileSegments = [
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
const hostileParam = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...hostileSegments) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map((x) => encodeURIComponent(x)),
  },
)
const hostileQueryValue = fc.oneof(
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
const rawBodies: { raw: string | Buffer; note: string }[] = [
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

function casesFor(r: RouteEntry, base: FixtureResult, count: number, seed: number): Case[] {
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

// ---------------------------------------------------------------------------------------------------
// Checks.

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/** Response validators of one route, by status; `null` where the answer is not JSON. */
function responseValidators(r: RouteEntry): Map<string, ValidateFunction | null> {
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema(ErrorBody)
  ajv.addSchema(Pagination)
  const out = new Map<string, ValidateFunction | null>()
  for (const [status, schema] of Object.entries(r.schema?.response ?? {})) {
    const sch = schema as Schema & { content?: unknown }
    if (sch.content !== undefined || sch.type === 'string') out.set(status, null)
    else out.set(status, ajv.compile(schema as object))
  }
  return out
}

function problemsOf(validators: Map<string, ValidateFunction | null>, reply: Reply): string[] {
  const p: string[] = []
  if (reply.status >= 500) p.push(`5xx: ${reply.status}`)
  const declared = validators.has(String(reply.status))
  if (!declared) p.push(`undeclared status ${reply.status}`)
  const validate = validators.get(String(reply.status))
  if (validate === null) return p
  const ct = String(reply.headers['content-type'] ?? '')
  if (!ct.startsWith('application/json')) {
    p.push(`non-envelope: content-type ${ct || '(none)'}: ${reply.text.slice(0, 120)}`)
    return p
  }
  const b = reply.body
  if (
    typeof b !== 'object' ||
    b === null ||
    !Number.isInteger(b.status) ||
    b.status !== reply.status ||
    typeof b.status_description !== 'string'
  ) {
    p.push(`non-envelope: ${reply.text.slice(0, 160)}`)
    return p
  }
  if (validate && !validate(b))
    p.push(`schema violation for ${reply.status}: ${JSON.stringify(validate.errors?.slice(0, 3))}`)
  return p
}

const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false })

/** One HTTPS request with the path sent byte for byte (no URL normalisation of `..` or percent escapes). */
function rawRequest(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  payload?: string | Buffer,
): Promise<Reply> {
  const { hostname, port } = new URL(origin)
  const h = { ...headers, ...(payload !== undefined ? { 'content-length': String(Buffer.byteLength(payload)) } : {}) }
  return new Promise((resolve, reject) => {
    const req = https.request({ hostname, port, path, method, headers: h, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // left as text: the check reports it
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body })
      })
    })
    req.on('error', reject)
    // A safeguard, not an assertion on time: a request the server never answers is reported, not waited on forever.
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')))
    if (payload !== undefined) req.write(payload)
    req.end()
  })
}

// ---------------------------------------------------------------------------------------------------

// SQLite by default; FUZZ_ALL_DIALECTS=1 adds PostgreSQL when HOSTAPI_TEST_PG_URL is set.
const fuzzDialects: Dialect[] = process.env.FUZZ_ALL_DIALECTS ? dialects : ['sqlite']
for (const dialect of fuzzDialects) {
  describe(`HTTP fuzzing of every operation (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let victim: TestAccount
    let adminToken: string
    let routes: RouteEntry[]

    before(async () => {
      // Sandbox mode, so the sandbox controls are fuzzed too (no fault is injected unless a fuzzed request sets one).
      t = await startTestApp(dialect, {
        env: {
          HOSTAPI_RATE_LIMIT: '100000000',
          HOSTAPI_SANDBOX: '1',
          ...(process.env.FUZZ_LOG ? { HOSTAPI_LOG_LEVEL: process.env.FUZZ_LOG } : {}),
        },
      })
      a = await t.account('Fuzz B.V.')
      victim = await t.account('Admin Target B.V.')
      adminToken = (await t.ctx.services.admin.createToken('fuzz')).token
      routes = orderedOperations(t.server.app.routeTable)
    })
    after(() => t.close())

    it('every operation declares every error status it can answer', () => {
      // Sandbox fault injection can answer any of FAULT_STATUSES on any customer operation.
      for (const status of FAULT_STATUSES)
        assert.ok(declaredErrorStatuses('GET', `${API_PREFIX}/whoami`).includes(status), `fault status ${status}`)
      for (const r of routes) {
        const declared = Object.keys(r.schema?.response ?? {})
        for (const status of declaredErrorStatuses(r.method, r.url)) {
          assert.ok(declared.includes(String(status)), `${r.method} ${r.url} does not declare ${status}`)
        }
      }
    })

    it('answers every hostile request with a declared envelope, never 5xx, and keeps answering', async (ctx) => {
      const total = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : undefined
      const perOperation = total ? Math.max(2, Math.ceil(total / routes.length)) : FUZZ_PER_OPERATION
      const seen = new Map<number, number>()
      const failures: string[] = []
      const counts = { requests: 0, fivexx: 0, nonEnvelope: 0, undeclared: 0, schema: 0 }
      const adminParams = (r: RouteEntry): Record<string, string> => {
        const values: Record<string, string> = {
          customer_number: String(victim.customerNumber),
          key: '1',
          id: '1',
          ticket_number: '1',
          invoice_nr: '1',
          extension: 'fuzz',
          name: 'fuzz-name.nl',
        }
        const out: Record<string, string> = {}
        for (const [, name] of r.url.matchAll(/:([A-Za-z_]+)/g)) out[name] = values[name] ?? '1'
        return out
      }

      for (const [i, r] of routes.entries()) {
        const skipped = SKIPPED.find((s) => s.method === r.method && s.url === r.url)
        if (skipped) continue
        const admin = r.url.startsWith(ADMIN_PREFIX)
        const base: FixtureResult = admin
          ? { params: adminParams(r) }
          : r.fixture
            ? await fixtures[r.fixture](t, a, r)
            : { params: {} }
        const validators = responseValidators(r)
        for (const c of casesFor(r, base, perOperation, SEED + i)) {
          const path =
            r.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) =>
              c.kind === 'param' ? c.params[name] : encodeURIComponent(c.params[name]),
            ) + c.query
          const auth: { key?: string; headers?: Record<string, string> } = c.noKey
            ? {}
            : admin
              ? { headers: { authorization: `Bearer ${adminToken}` } }
              : { key: a.key }
          let reply: Reply
          try {
            const payload = c.raw !== undefined ? c.raw : c.body !== undefined ? JSON.stringify(c.body) : undefined
            const headers: Record<string, string> = {
              ...(auth.key ? { 'api-key': auth.key } : {}),
              ...auth.headers,
              ...(payload !== undefined ? { 'content-type': c.contentType ?? 'application/json' } : {}),
              ...(payload !== undefined && c.encoding !== undefined ? { 'content-encoding': c.encoding } : {}),
              ...(c.idempotencyKey !== undefined ? { 'idempotency-key': c.idempotencyKey } : {}),
            }
            if (process.env.FUZZ_TRACE)
              fs.appendFileSync(
                process.env.FUZZ_TRACE,
                `${r.method} ${path.slice(0, 300)} ${String(payload ?? '').slice(0, 300)}\n`,
              )
            reply = await rawRequest(t.origin, r.method, path, headers, payload)
          } catch (e) {
            failures.push(`${r.method} ${r.url} [${c.note}]: request failed: ${(e as Error).message}`)
            counts.requests++
            continue
          }
          counts.requests++
          seen.set(reply.status, (seen.get(reply.status) ?? 0) + 1)
          const problems = problemsOf(validators, reply)
          for (const p of problems) {
            if (p.startsWith('5xx')) counts.fivexx++
            else if (p.startsWith('non-envelope')) counts.nonEnvelope++
            else if (p.startsWith('undeclared')) counts.undeclared++
            else if (p.startsWith('schema')) counts.schema++
          }
          if (problems.length) {
            const sent =
              c.raw !== undefined
                ? ` raw=${JSON.stringify(String(c.raw).slice(0, 80))}`
                : c.body !== undefined
                  ? ` body=${JSON.stringify(c.body)?.slice(0, 200)}`
                  : ''
            failures.push(
              `${r.method} ${path.slice(0, 200)}${c.noKey ? ' (no key)' : ''}${sent} -> ${reply.status}: ${problems.join('; ')}`,
            )
          }
        }
        if (r.url.startsWith(`${ADMIN_PREFIX}/sandbox`)) {
          // Faults a fuzzed request injected, and the accounts a fuzzed reset deleted, must not fail the next check.
          await t.request('DELETE', '/admin/v1/sandbox/faults', { headers: { authorization: `Bearer ${adminToken}` } })
          if (r.operationId === 'sandboxReset') a = await t.account('Fuzz B.V.')
        }
        const alive = await t.request('GET', '/api/v2/whoami', { key: a.key })
        if (alive.status !== 200)
          failures.push(`GET /whoami answers ${alive.status} after ${r.method} ${r.url}: ${alive.text.slice(0, 200)}`)
      }
      const statuses = [...seen.entries()]
        .sort((x, y) => x[0] - y[0])
        .map(([s, n]) => `${s}:${n}`)
        .join(' ')
      ctx.diagnostic(
        `fuzz ${dialect} seed ${SEED}: ${counts.requests} requests over ${routes.length} operations (${SKIPPED.length} skipped); ` +
          `5xx ${counts.fivexx}, non-envelope ${counts.nonEnvelope}, undeclared ${counts.undeclared}, schema violations ${counts.schema}; statuses ${statuses}`,
      )
      if (process.env.FUZZ_REPORT) fs.writeFileSync(process.env.FUZZ_REPORT, `${failures.join('\n')}\n`)
      const alive = await t.request('GET', '/api/v2/whoami', { key: a.key })
      assert.equal(alive.status, 200, 'the server still answers GET /whoami')
      assert.deepEqual(failures.slice(0, 60), [], `${failures.length} failing answers`)
    })
  })
}
