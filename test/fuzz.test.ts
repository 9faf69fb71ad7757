import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import https from 'node:https'
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
import { casesFor } from './helpers/fuzz-cases.js'
import type { Schema } from './helpers/fuzz-values.js'
import { openScopes } from '../src/lib/scoped-storage.js'
import { eventually } from './helpers/wait.js'

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
        // Each request's scope (its pending audit row) ends with its handler: the async hooks go off once none runs.
        await eventually(() => openScopes() === 0, { what: "the requests' scopes to end", timeoutMs: 5_000 }).catch(
          () => failures.push(`${openScopes()} request scopes still open 5 s after ${r.method} ${r.url} answered`),
        )
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
