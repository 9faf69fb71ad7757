import https from 'node:https'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { ADMIN_PREFIX, API_PREFIX } from '../../src/http/constants.js'
import type { RouteEntry } from '../../src/http/route-table.js'
import { DELIVERY_JOB } from '../../src/modules/webhooks/webhook-events.js'
import type { TestAccount, TestApp } from './app.js'
import { queryUdp } from './dns.js'
import { fixtures, type FixtureResult } from './fixtures.js'
import { makeTicket } from './fixtures/account.js'
import { makeDomain } from './fixtures/domains.js'

/*
 * The event-loop budget: every operation's largest valid inputs, sent one at a time while a prober measures how long
 * the server's event loop is held. The app runs in this process, so a perf_hooks histogram here measures the
 * server's loop; request bodies are built before the prober is reset, and answers are read as bytes, not parsed.
 * Used by test/stall.test.ts (fails past a generous bound) and bench/stall.ts (reports against the budget).
 */

/** What each request may hold the event loop for. */
export const BUDGET_MS = 50

/** One request of the suite: an operation's largest valid input, or a known heavy one. */
export interface StallCase {
  /** The route family: the path's first two literal segments (`domains/dns`, `account/tickets`). */
  family: string
  label: string
  method: string
  path: string
  payload?: string
  headers: Record<string, string>
  /**
   * A route's first request: it also pays for what is loaded or compiled on first use (its schemas' validators and
   * serialisers, lazily required packages such as pdfkit), once per process. Reported, not held to the bound.
   */
  first?: boolean
}

/** What one case held the event loop for, and what the server answered. */
export interface StallResult {
  family: string
  label: string
  status: number
  blockMs: number
  first?: boolean
}

type Schema = {
  type?: string | string[]
  properties?: Record<string, Schema>
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  maximum?: number
  maxLength?: number
  maxItems?: number
  uniqueItems?: boolean
  format?: string
  pattern?: string
}

const M = 1024 * 1024

/** The family of a route: its first two literal path segments after the API prefix. */
export const familyOf = (url: string): string => {
  const admin = url.startsWith(ADMIN_PREFIX)
  const rest = url.slice((admin ? ADMIN_PREFIX : API_PREFIX).length)
  const parts = rest.split('/').filter((p) => p && !p.startsWith(':'))
  return `${admin ? 'admin:' : ''}${parts.slice(0, 2).join('/') || '/'}`
}

/** A free-text string field (no format, pattern or enum) and its largest length, or null. */
const freeText = (s: Schema | undefined): number | null =>
  s && !s.format && !s.pattern && !s.enum && s.const === undefined && s.maxLength && s.maxLength <= 16 * M
    ? s.maxLength
    : null

/** 64 KiB-class markup for a long text field: tags nested as deep as the length allows (sanitising it was slow). */
export const nestedHtml = (length: number, tag = 'b'): string => {
  const open = `<${tag}>`
  return `${open.repeat(Math.floor((length - 1) / open.length))}x`
}

/**
 * A valid value grown to the schema's limits: free-text strings to their maxLength (or `text(max)`), arrays to
 * their maxItems by repeating their elements.
 */
function grow(s: Schema | undefined, v: unknown, text: (max: number) => string, depth = 0): unknown {
  if (!s || depth > 10) return v
  if (typeof v === 'string') {
    const max = freeText(s)
    return max && max > v.length ? text(max) : v
  }
  if (Array.isArray(v)) {
    const items = v.map((x) => grow(s.items, x, text, depth + 1))
    if (s.maxItems && !s.uniqueItems && items.length)
      while (items.length < Math.min(s.maxItems, 100_000)) items.push(items[items.length % v.length])
    return items
  }
  if (v !== null && typeof v === 'object') {
    const alt = s.anyOf ?? s.oneOf
    const props = s.properties ?? alt?.find((a) => a.properties)?.properties
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, grow(props?.[k], x, text, depth + 1)]))
  }
  return v
}

/** Halves the longest array until the JSON fits `limit` bytes. */
function fit(v: unknown, limit: number): string {
  let text = JSON.stringify(v)
  while (Buffer.byteLength(text) > limit) {
    let longest: unknown[] | null = null
    const walk = (x: unknown) => {
      if (Array.isArray(x)) {
        if (!longest || x.length > longest.length) longest = x
        x.forEach(walk)
      } else if (x !== null && typeof x === 'object') Object.values(x).forEach(walk)
    }
    walk(v)
    const arr = longest as unknown[] | null
    if (!arr || arr.length < 2) break
    arr.length = Math.ceil(arr.length / 2)
    text = JSON.stringify(v)
  }
  return text
}

/** Who sends the cases: an account for the customer API, an admin token and a customer (with a ticket) for the admin API. */
export interface StallActors {
  account: TestAccount
  adminToken: string
  customer: TestAccount
  customerTicket: number
}

/** The cases of one route: its fixture request, grown to the schema's limits, and long text fields as nested markup. */
export async function routeCases(t: TestApp, r: RouteEntry, who: StallActors): Promise<StallCase[]> {
  const admin = r.url.startsWith(ADMIN_PREFIX)
  let base: FixtureResult
  if (admin) {
    const values: Record<string, string> = {
      customer_number: String(who.customer.customerNumber),
      ticket_number: String(who.customerTicket),
      extension: 'nl',
    }
    const params: Record<string, string> = {}
    for (const [, name] of r.url.matchAll(/:([A-Za-z_]+)/g)) params[name] = values[name] ?? '1'
    base = { params }
  } else base = r.fixture ? await fixtures[r.fixture](t, who.account, r) : { params: {} }
  const auth: Record<string, string> = admin
    ? { authorization: `Bearer ${who.adminToken}` }
    : { 'api-key': who.account.key }
  const s = r.schema ?? {}
  const query = (s.querystring as Schema | undefined)?.properties ?? {}
  const limit = query.limit?.maximum
  const path =
    r.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(base.params[name] ?? '1')) +
    (limit ? `?limit=${limit}` : '')
  const family = familyOf(r.url)
  const cases: StallCase[] = []
  const add = (label: string, body?: unknown, raw?: string, first = false) => {
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body))
    cases.push({
      first,
      family: first ? 'first request of a route' : family,
      label: `${r.method} ${r.url} ${label}`,
      method: r.method,
      path,
      payload,
      headers: { ...auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    })
  }
  const bodySchema = s.body as Schema | undefined
  add('(first request)', base.body, undefined, true)
  add('(fixture)', base.body)
  if (bodySchema && base.body !== undefined) {
    const limitBytes = (r.url.endsWith('/dns/zone') ? 11 : 1) * M - 4096
    add(
      '(largest)',
      undefined,
      fit(
        grow(bodySchema, base.body, (max) => 'x'.repeat(max)),
        limitBytes,
      ),
    )
    const grown = fit(
      grow(bodySchema, base.body, (max) => (max >= 4096 ? nestedHtml(max) : 'x'.repeat(max))),
      limitBytes,
    )
    if (grown.includes('<b>')) add('(long texts as nested markup)', undefined, grown)
  }
  return cases
}

/** A 10 MiB zone of 50,000 records (the default limits), as BIND text. */
export function largestZone(): string {
  const lines: string[] = []
  for (let i = 0; i < 50_000; i++) lines.push(`t${i} 3600 IN TXT "${'v'.repeat(170)}${String(i).padStart(8, '0')}"`)
  return `${lines.join('\n')}\n`
}

/** The known heavy inputs of a domain's DNS: the largest zone, record set, deepest and most-valued bodies. */
export async function heavyDnsCases(t: TestApp, who: StallActors): Promise<StallCase[]> {
  const domain = await makeDomain(t, who.account)
  const headers = { 'api-key': who.account.key, 'content-type': 'application/json' }
  const dns = `/api/v2/domains/${domain}/dns`
  const c = (label: string, method: string, path: string, payload?: string): StallCase => ({
    family: familyOf(path.replace(domain, ':domain')),
    label,
    method,
    path,
    payload,
    headers: payload === undefined ? { 'api-key': who.account.key } : headers,
  })
  const deepest = `${'['.repeat(63)}${']'.repeat(63)}`
  const records = Array.from({ length: 10_000 }, (_, i) => ({
    type: 'A',
    name: `h${i}`,
    value: '192.0.2.1',
    ttl: 3600,
  }))
  const manyKeys = JSON.stringify(Object.fromEntries(Array.from({ length: 500_000 }, (_, i) => [`k${i}`, i])))
  const first = (x: StallCase): StallCase => ({ ...x, first: true, family: 'first request of a route' })
  return [
    // Over 1 MiB: the first body and zone parsed in the worker pool, which starts its thread then.
    first(
      c(
        'first PUT zone',
        'PUT',
        `${dns}/zone`,
        JSON.stringify({ zone: `${'; first\n'.repeat(150_000)}www 3600 IN A 192.0.2.1\n` }),
      ),
    ),
    first(c('first GET records', 'GET', dns)),
    first(c('first GET zone file', 'GET', `${dns}/zone`)),
    // Over the 200 records checked inline: the first record set checked in the worker pool too.
    first(c('first PUT records', 'PUT', dns, JSON.stringify({ records: records.slice(0, 201) }))),
    c('PUT records: 10,000 records', 'PUT', dns, JSON.stringify({ records })),
    c('PUT zone: 8 MB body of 500,000 keys', 'PUT', `${dns}/zone`, manyKeys),
    c(
      'PUT records: deepest allowed nesting, 99,000 values',
      'PUT',
      dns,
      `{"records":[],"x":[${Array(1500).fill(deepest).join(',')}]}`,
    ),
    c('PUT records: 99,999 empty objects', 'PUT', dns, `{"records":[],"x":[${Array(99_990).fill('{}').join(',')}]}`),
    c(
      'PUT zone: 11 MiB body nested too deep',
      'PUT',
      `${dns}/zone`,
      `{"zone":"","x":${'['.repeat(2_500_000)}${']'.repeat(2_500_000)}}`,
    ),
    c('PUT zone: 10 MiB, 50,000 records', 'PUT', `${dns}/zone`, JSON.stringify({ zone: largestZone() })),
    c('GET records of a 50,000-record zone', 'GET', dns),
    c('GET zone file of a 50,000-record zone', 'GET', `${dns}/zone`),
  ]
}

/** Nested markup in ticket messages: opened, answered, read back (each message is sanitised again on the way out). */
export async function heavyTicketCases(t: TestApp, who: StallActors): Promise<StallCase[]> {
  const ticket = await makeTicket(t, who.account)
  const headers = { 'api-key': who.account.key, 'content-type': 'application/json' }
  const cases: StallCase[] = [
    {
      first: true,
      family: 'first request of a route',
      label: 'first POST ticket',
      method: 'POST',
      path: '/api/v2/account/tickets',
      headers,
      payload: JSON.stringify({ subject: 'First', department: 'support', message: 'Hello' }),
    },
    {
      first: true,
      family: 'first request of a route',
      label: 'first POST reply',
      method: 'POST',
      path: `/api/v2/account/tickets/${ticket}/reply`,
      headers,
      payload: JSON.stringify({ message: 'Hello' }),
    },
    {
      first: true,
      family: 'first request of a route',
      label: 'first GET ticket',
      method: 'GET',
      path: `/api/v2/account/tickets/${ticket}`,
      headers: { 'api-key': who.account.key },
    },
  ]
  for (const tag of ['b', 'div', 'x', 'table']) {
    const message = nestedHtml(65_536, tag)
    cases.push(
      {
        family: 'account/tickets',
        label: `POST ticket, 64 KiB of nested <${tag}>`,
        method: 'POST',
        path: '/api/v2/account/tickets',
        headers,
        payload: JSON.stringify({ subject: 'Nested', department: 'support', message }),
      },
      {
        family: 'account/tickets',
        label: `POST reply, 64 KiB of nested <${tag}>`,
        method: 'POST',
        path: `/api/v2/account/tickets/${ticket}/reply`,
        headers,
        payload: JSON.stringify({ message }),
      },
    )
  }
  cases.push({
    family: 'account/tickets',
    label: 'GET a ticket of four 64 KiB nested replies',
    method: 'GET',
    path: `/api/v2/account/tickets/${ticket}`,
    headers: { 'api-key': who.account.key },
  })
  return cases
}

const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false })

/** Sends one case; the answer is read as bytes (parsing it here would count against the server's loop). */
function send(origin: string, c: StallCase, body: Buffer | null): Promise<number> {
  const { hostname, port } = new URL(origin)
  const headers = {
    ...c.headers,
    ...(body === null ? {} : { 'content-length': String(body.length) }),
  }
  return new Promise((resolve, reject) => {
    const req = https.request({ hostname, port, path: c.path, method: c.method, headers, agent }, (res) => {
      res.on('data', () => undefined)
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.setTimeout(120_000, () => req.destroy(new Error('no answer within 120 s')))
    // In slices, each written when the socket has taken the last: one write of 10 MB would encrypt it all at
    // once, on the event loop the prober measures.
    const SLICE = 64 * 1024
    const write = (from: number) => {
      let at = from
      while (body && at < body.length) {
        const more = req.write(body.subarray(at, at + SLICE))
        at += SLICE
        if (!more) return void req.once('drain', () => write(at))
      }
      req.end()
    }
    write(0)
  })
}

const RESOLUTION_MS = 5

/** Measures the event loop's longest block while `fn` runs. */
export async function blockOf<T>(fn: () => Promise<T>): Promise<{ value: T; blockMs: number }> {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  h.enable()
  try {
    const value = await fn()
    return { value, blockMs: Math.max(0, h.max / 1e6 - RESOLUTION_MS) }
  } finally {
    h.disable()
  }
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE'])

/** The jobs drained after each request: every kind but webhook deliveries (they would leave loopback). */
const drainable = (t: TestApp) => t.ctx.jobs.kinds.filter((k) => k !== DELIVERY_JOB)

/**
 * Runs the cases one at a time: each request, then the jobs it queued (family `jobs`), each measured; a change
 * to a domain's DNS that answers 200 is followed by a DNS query for the zone (family `dns-server`: its rebuild).
 * The jobs and the query after a route's first request count as first too (their code runs for the first time).
 */
export async function runCases(
  t: TestApp,
  cases: StallCase[],
  onResult?: (r: StallResult) => void,
  opts: { remeasureOverMs?: number } = {},
): Promise<StallResult[]> {
  const results: StallResult[] = []
  const note = (r: StallResult) => {
    results.push(r)
    if (process.env.STALL_VERBOSE) process.stderr.write(`${Math.round(r.blockMs)} ms ${r.status} ${r.label}\n`)
    onResult?.(r)
  }
  const kinds = drainable(t)
  for (const c of cases) {
    const body = c.payload === undefined ? null : Buffer.from(c.payload)
    let { value: status, blockMs } = await blockOf(() => send(t.origin, c, body))
    // A garbage collection or a busy machine can hold the loop once; a route's own work holds it every time. An
    // idempotent request over the bound is sent twice more, and its least block counts.
    for (
      let n = 0;
      n < 2 && blockMs > (opts.remeasureOverMs ?? Number.POSITIVE_INFINITY) && IDEMPOTENT.has(c.method);
      n++
    ) {
      const again = await blockOf(() => send(t.origin, c, body))
      if (again.blockMs < blockMs) ({ value: status, blockMs } = again)
    }
    note({ family: c.family, label: c.label, status, blockMs, first: c.first })
    const jobs = await blockOf(() => t.ctx.jobs.drain(kinds))
    if (jobs.value > 0)
      note({
        family: 'jobs',
        label: `${jobs.value} jobs after ${c.label}`,
        status: 0,
        blockMs: jobs.blockMs,
        first: c.first,
      })
    const dns = t.ctx.drivers.dns.address()
    const zone = /\/domains\/([^/]+)\/dns/.exec(c.path)?.[1]
    if (dns && zone && c.method !== 'GET' && status === 200) {
      const q = await blockOf(() => queryUdp(dns.port, `t1.${zone}`, 'TXT', { timeoutMs: 60_000 }))
      note({
        first: c.first,
        family: 'dns-server',
        label: `query after ${c.label} (${q.value.answers?.length ?? 0} answers, flags ${q.value.flags})`,
        status: 0,
        blockMs: q.blockMs,
      })
    }
  }
  return results
}

/** Each family's worst block, worst first. */
export function worstByFamily(results: StallResult[]): StallResult[] {
  const worst = new Map<string, StallResult>()
  for (const r of results) if ((worst.get(r.family)?.blockMs ?? -1) < r.blockMs) worst.set(r.family, r)
  return [...worst.values()].sort((a, b) => b.blockMs - a.blockMs)
}
