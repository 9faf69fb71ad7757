// `npm run bench:scale`: the read scenarios of `npm run bench` for the same account on two databases, one holding
// only the small data set and one where other accounts fill it up to 10,000 accounts, 100,000 domains and
// 1,000,000 DNS records; each with the response cache on and off (HOSTAPI_RESPONSE_CACHE_MB=0). The target: at
// 1M records every read stays within 2× of its small-data figure. Writes bench/scale-results.json.
// Run on SQLite, or on PostgreSQL when DATABASE_URL is set (a schema of its own per data set, dropped at the end).
// BENCH_SCALE_SMALL_ONLY=1 skips the 1M data set and prints each read's uncached figure against its cached one.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Kysely, Transaction } from 'kysely'
import pgLib from 'pg'
import { loadConfig } from '../src/config/config.js'
import { createContext } from '../src/context.js'
import type { DB } from '../src/db/tables.js'
import { permissionMap } from '../src/modules/iam/permissions.js'
import { STATUS } from '../src/modules/domains/domains.service.js'
import { nextSerial } from '../src/lib/dns/zone-serial.js'
import { scenarios, seedBenchmarkData, settle, DEMO_KEY, type BenchData } from './scenarios.js'
import {
  call,
  connections,
  dist,
  durationSeconds,
  load,
  root,
  waitForLine,
  warmupSeconds,
  type Figures,
} from './harness.js'

/** Totals of the large data set, the small data set included. */
const ACCOUNTS = 10_000
const DOMAINS_TOTAL = 100_000
const RECORDS_TOTAL = 1_000_000
/** Rows per INSERT statement (at most 19 columns: far below SQLite's 32,766 and PostgreSQL's 65,535 parameters). */
const BATCH = 500
/** Rows per transaction. */
const TRANSACTION = 100_000

const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null
const progress = (text: string) => process.stderr.write(`bench:scale: ${text}\n`)
const pg = process.env.DATABASE_URL?.startsWith('postgres') ?? false
/** The server's CPU time (user and system) per request, ms, by `size mode scenario` (Linux only). */
const serverCpu = new Map<string, number>()
const cpuSeconds = (pid: number | undefined): number => {
  const stat = pid ? fs.readFileSync(`/proc/${pid}/stat`, 'utf8') : ''
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}
/** BENCH_SCALE_SMALL_ONLY=1 measures the small data set alone (no 1M fill). */
const smallOnly = process.env.BENCH_SCALE_SMALL_ONLY === '1'

type Size = 'small' | 'large'
type Mode = 'cached' | 'uncached'
interface DataSet {
  size: Size
  dataDir: string
  schema: string | null
  data: BenchData
  seedSeconds: number
  counts: Counts
}
interface Counts {
  accounts: number
  domains: number
  records: number
}
interface Row {
  scenario: string
  mode: Mode
  small: Figures
  large: Figures
  ratio: number
}

const countOf = async (db: Kysely<DB>, table: 'accounts' | 'domains' | 'dns_records') =>
  Number(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

async function countAll(db: Kysely<DB>): Promise<Counts> {
  return {
    accounts: await countOf(db, 'accounts'),
    domains: await countOf(db, 'domains'),
    records: await countOf(db, 'dns_records'),
  }
}

function serverEnv(dataDir: string, schema: string | null): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOSTAPI_DATA_DIR: dataDir,
    HOSTAPI_PORT: '0',
    HOSTAPI_DEMO_KEY: DEMO_KEY,
    HOSTAPI_LOG_LEVEL: 'warn',
    HOSTAPI_RATE_LIMIT: '1000000000',
    // Every load connection comes from one address: BENCH_CONNECTIONS may exceed the per-address cap.
    HOSTAPI_MAX_CONNECTIONS_PER_IP: '0',
    HOSTAPI_DNS_PORT: '0',
    HOSTAPI_WORKERS: '1',
    ...(schema ? { HOSTAPI_DB_SCHEMA: schema } : {}),
  }
}

/** Groups `rows` into arrays of `size`. */
function* chunks<T>(rows: Iterable<T>, size: number): Generator<T[]> {
  let batch: T[] = []
  for (const row of rows) {
    batch.push(row)
    if (batch.length === size) {
      yield batch
      batch = []
    }
  }
  if (batch.length) yield batch
}

/** Runs `insert` on every batch of `rows`, TRANSACTION rows to a transaction, with progress on stderr. */
async function bulk<T>(
  db: Kysely<DB>,
  what: string,
  total: number,
  rows: Iterable<T>,
  insert: (trx: Transaction<DB>, batch: T[]) => Promise<void>,
): Promise<void> {
  let done = 0
  for (const group of chunks(rows, TRANSACTION)) {
    await db.transaction().execute(async (trx) => {
      for (const batch of chunks(group, BATCH)) await insert(trx, batch)
    })
    done += group.length
    progress(`${what}: ${done.toLocaleString('en')}/${total.toLocaleString('en')}`)
  }
}

/** `total` split over `parts` as evenly as whole numbers allow. */
const share = (total: number, parts: number, i: number) => Math.floor(total / parts) + (i < total % parts ? 1 : 0)

/** The records of a filler zone: the usual web and mail set first, then hosts. */
function zoneRecords(zone: string, n: number, count: number): { type: string; name: string; value: string }[] {
  const ip = (k: number) => `${['192.0.2', '198.51.100', '203.0.113'][k % 3]}.${(k % 250) + 1}`
  const ip6 = (k: number) => `2001:db8::${((k % 65534) + 1).toString(16)}`
  const set = [
    { type: 'A', name: zone, value: ip(n) },
    { type: 'AAAA', name: zone, value: ip6(n) },
    { type: 'CNAME', name: `www.${zone}`, value: `${zone}.` },
    { type: 'MX', name: zone, value: `10 mail.${zone}.` },
    { type: 'A', name: `mail.${zone}`, value: ip(n + 1) },
    { type: 'TXT', name: zone, value: 'v=spf1 mx -all' },
    { type: 'TXT', name: `_dmarc.${zone}`, value: `v=DMARC1; p=none; rua=mailto:dmarc@${zone}` },
    { type: 'AAAA', name: `mail.${zone}`, value: ip6(n + 1) },
    { type: 'MX', name: zone, value: `20 mx2.${zone}.` },
    { type: 'A', name: `mx2.${zone}`, value: ip(n + 2) },
  ]
  return Array.from({ length: count }, (_, i) => set[i] ?? { type: 'A', name: `host${i}.${zone}`, value: ip(n + i) })
}

/**
 * Fills the database seeded by `seedBenchmarkData` up to the totals with other accounts (each with its main
 * user), their domains and records: multi-row inserts straight into the tables, then ANALYZE (on PostgreSQL
 * VACUUM ANALYZE).
 */
async function fill(env: NodeJS.ProcessEnv): Promise<Counts> {
  const ctx = createContext(loadConfig({ ...env, HOSTAPI_JOBS: '0' }))
  const db = ctx.db
  const count = (table: 'accounts' | 'domains' | 'dns_records') => countOf(db, table)
  try {
    const now = ctx.clock.now()
    const at = now.toISOString()
    const permissions = JSON.stringify(permissionMap(true))
    const builtin = ctx.services.nameservers.builtin()
    const nameservers = JSON.stringify(builtin.nameservers)
    const serial = nextSerial(0, now)
    const renewalDate = `${now.getUTCFullYear() + 1}-06-01`

    const accounts = ACCOUNTS - (await count('accounts'))
    const max = await db
      .selectFrom('accounts')
      .select((eb) => eb.fn.max('customer_number').as('max'))
      .executeTakeFirstOrThrow()
    const firstNumber = Number(max.max) + 1
    const accountIds: number[] = []
    await bulk(
      db,
      'accounts',
      accounts,
      Array.from({ length: accounts }, (_, i) => firstNumber + i),
      async (trx, numbers) => {
        const rows = await trx
          .insertInto('accounts')
          .values(
            numbers.map((n) => ({
              customer_number: n,
              name: `Customer ${n} B.V.`,
              status: 'active' as const,
              created_at: at,
            })),
          )
          .returning(['id', 'customer_number'])
          .execute()
        const byNumber = new Map(rows.map((r) => [Number(r.customer_number), r.id]))
        const ids = numbers.map((n) => byNumber.get(n)!)
        accountIds.push(...ids)
        await trx
          .insertInto('users')
          .values(
            numbers.map((n, i) => ({
              account_id: ids[i],
              username: `customer${n}@scale.example`,
              email: `customer${n}@scale.example`,
              firstname: 'Customer',
              lastname: String(n),
              password_hash: null,
              is_main_user: 1,
              two_factor: 0,
              permissions,
              created_at: at,
            })),
          )
          .execute()
      },
    )

    const domains = DOMAINS_TOTAL - (await count('domains'))
    const tlds = ['nl', 'com', 'eu', 'net', 'org', 'be', 'de']
    function* domainRows() {
      let n = 0
      for (const [k, accountId] of accountIds.entries()) {
        for (let j = 0; j < share(domains, accountIds.length, k); j++, n++)
          yield { accountId, name: `site-${String(n).padStart(6, '0')}.${tlds[n % tlds.length]}` }
      }
    }
    const domainIds: { id: number; name: string }[] = []
    await bulk(db, 'domains', domains, domainRows(), async (trx, batch) => {
      const rows = await trx
        .insertInto('domains')
        .values(
          batch.map((d) => ({
            account_id: d.accountId,
            name: d.name,
            status: STATUS.active.status,
            status_id: STATUS.active.id,
            renewal_date: renewalDate,
            tags: '[]',
            nameservers,
            nameserver_profile: builtin.alias,
            is_locked: 1,
            dnssec_enabled: 0,
            dnssec_keys: '[]',
            forwarder: null,
            forwarder_enabled: 0,
            managed_dns: 1,
            contacts: '{}',
            cancel_at: null,
            zone_serial: serial,
            created_at: at,
            updated_at: at,
          })),
        )
        .returning(['id', 'name'])
        .execute()
      const byName = new Map(rows.map((r) => [r.name, r.id]))
      domainIds.push(...batch.map((d) => ({ id: byName.get(d.name)!, name: d.name })))
    })

    const records = RECORDS_TOTAL - (await count('dns_records'))
    function* recordRows() {
      for (const [k, d] of domainIds.entries()) {
        for (const r of zoneRecords(d.name, k, share(records, domainIds.length, k)))
          yield { domain_id: d.id, ...r, ttl: 3600, created_at: at }
      }
    }
    await bulk(db, 'dns_records', records, recordRows(), async (trx, batch) => {
      await trx.insertInto('dns_records').values(batch).execute()
    })

    progress('ANALYZE')
    await settle(db, ctx.config.database.dialect)
    return await countAll(db)
  } finally {
    await ctx.close()
  }
}

async function countIn(env: NodeJS.ProcessEnv): Promise<Counts> {
  const ctx = createContext(loadConfig({ ...env, HOSTAPI_JOBS: '0' }))
  try {
    return await countAll(ctx.db)
  } finally {
    await ctx.close()
  }
}

async function seed(size: Size): Promise<DataSet> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `hostapi-bench-scale-${size}-`))
  const schema = pg ? (size === 'large' ? `bench_scale_${process.pid}` : `bench_scale_small_${process.pid}`) : null
  const env = serverEnv(dataDir, schema)
  const t0 = performance.now()
  progress(`seeding the ${size} data set`)
  const data = await seedBenchmarkData(env, schema)
  const c = size === 'large' ? await fill(env) : await countIn(env)
  const seedSeconds = (performance.now() - t0) / 1000
  progress(
    `${size} data set: ${c.accounts.toLocaleString('en')} accounts, ${c.domains.toLocaleString('en')} domains, ${c.records.toLocaleString('en')} DNS records, seeded in ${seedSeconds.toFixed(1)} s`,
  )
  return { size, dataDir, schema, data, seedSeconds, counts: c }
}

/** The GET scenarios on one data set with the response cache on or off, each on a server started for the mode. */
async function measure(set: DataSet, mode: Mode, children: ChildProcess[]): Promise<Map<string, Figures>> {
  const env = serverEnv(set.dataDir, set.schema)
  if (mode === 'uncached') env.HOSTAPI_RESPONSE_CACHE_MB = '0'
  else delete env.HOSTAPI_RESPONSE_CACHE_MB
  const server = spawn(process.execPath, [dist('src/cli/main.js'), 'serve'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(server)
  const out = new Map<string, Figures>()
  try {
    const [, base] = await waitForLine(server, /^hostapi listening on (\S+)/)
    const auth = { 'API-Key': DEMO_KEY }
    for (const s of readScenarios(set.data)) {
      const url = `${base}${s.path}`
      const sample = await call(url, s.method, auth).catch(async (err: Error) => {
        // Says whether the server is gone or only the connection.
        await new Promise((r) => setTimeout(r, 200))
        const gone = server.exitCode ?? server.signalCode
        throw new Error(
          `${s.name} (${set.size}, ${mode}): ${err.message}${gone === null ? '' : `; hostapi exited: ${gone}`}`,
        )
      })
      if (sample.status !== 200) throw new Error(`${s.name}: ${sample.status} ${sample.text.slice(0, 200)}`)
      progress(`${s.name}: ${set.size}, ${mode}`)
      const cpu0 = cpuSeconds(server.pid)
      const figures = load(url, s.method, auth)
      out.set(s.name, figures)
      // Per request, the warm-up's requests (at the measured rate) included.
      const sent = figures.rps * (warmupSeconds + durationSeconds)
      serverCpu.set(`${set.size} ${mode} ${s.name}`, ((cpuSeconds(server.pid) - cpu0) * 1000) / sent)
    }
  } finally {
    server.kill('SIGTERM')
    await new Promise((r) =>
      server.exitCode === null && server.signalCode === null ? server.once('exit', r) : r(null),
    )
  }
  return out
}

const readScenarios = (data: BenchData) =>
  scenarios(data).filter((s) => s.method === 'GET' && (!only || only.test(s.name)))

async function dropSchema(schema: string): Promise<void> {
  const client = new pgLib.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  await client.query(`drop schema if exists ${schema} cascade`)
  await client.end()
}

async function main() {
  if (process.env.BENCH_NO_BUILD !== '1')
    execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' })
  const sets: DataSet[] = []
  const children: ChildProcess[] = []
  const figures = new Map<string, Map<string, Figures>>()
  try {
    for (const size of smallOnly ? (['small'] as const) : (['small', 'large'] as const)) {
      const set = await seed(size)
      sets.push(set)
      for (const mode of ['cached', 'uncached'] as const)
        figures.set(`${size} ${mode}`, await measure(set, mode, children))
    }
  } finally {
    for (const c of children) c.kill('SIGKILL')
    for (const set of sets) {
      fs.rmSync(set.dataDir, { recursive: true, force: true })
      if (set.schema) await dropSchema(set.schema)
    }
  }
  if (smallOnly) return reportSmall(sets[0], figures)
  const rows: Row[] = []
  for (const s of readScenarios(sets[0].data)) {
    for (const mode of ['cached', 'uncached'] as const) {
      const small = figures.get(`small ${mode}`)!.get(s.name)!
      const large = figures.get(`large ${mode}`)!.get(s.name)!
      rows.push({ scenario: s.name, mode, small, large, ratio: small.rps / large.rps })
    }
  }
  report(rows, sets)
}

/** BENCH_SCALE_SMALL_ONLY=1: the small data set alone, each read uncached against cached (nothing written to a file). */
function reportSmall(set: DataSet, figures: Map<string, Map<string, Figures>>) {
  const lines = [
    `${pg ? 'PostgreSQL' : 'SQLite'}, small data set, ${connections} connections, ${durationSeconds} s measured`,
  ]
  for (const s of readScenarios(set.data)) {
    const cached = figures.get('small cached')?.get(s.name)
    const uncached = figures.get('small uncached')?.get(s.name)
    if (!cached || !uncached) continue
    lines.push(
      `${s.name}: cached ${cached.rps.toFixed(0)} req/s, uncached ${uncached.rps.toFixed(0)} req/s, uncached/cached ${(uncached.rps / cached.rps).toFixed(2)}× (p99 ${cached.p99}/${uncached.p99} ms, errors ${cached.errors}/${uncached.errors}; server CPU per request ${serverCpu.get(`small cached ${s.name}`)?.toFixed(3)}/${serverCpu.get(`small uncached ${s.name}`)?.toFixed(3)} ms)`,
    )
  }
  process.stdout.write(`\n${lines.join('\n')}\n`)
}

function report(rows: Row[], sets: DataSet[]) {
  const [small, large] = sets
  const header = ['scenario', 'mode', 'small req/s', '1M req/s', 'small/1M', 'p99 small', 'p99 1M', 'errors']
  const cells = rows.map((r) => [
    r.scenario,
    r.mode,
    r.small.rps.toFixed(0),
    r.large.rps.toFixed(0),
    `${r.ratio.toFixed(2)}×`,
    `${r.small.p99} ms`,
    `${r.large.p99} ms`,
    `${r.small.errors}/${r.large.errors}`,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)))
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i]))
      .join('  ')
      .trimEnd()
  const size = (c: Counts) =>
    `${c.accounts.toLocaleString('en')} accounts, ${c.domains.toLocaleString('en')} domains, ${c.records.toLocaleString('en')} DNS records`
  const out = [
    `${pg ? 'PostgreSQL' : 'SQLite'}, ${connections} connections, ${warmupSeconds} s warm-up, ${durationSeconds} s measured, ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`,
    `small: ${size(small.counts)} (seeded in ${small.seedSeconds.toFixed(1)} s)`,
    `1M:    ${size(large.counts)} (seeded in ${large.seedSeconds.toFixed(1)} s)`,
    '',
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...cells.map(line),
    '',
  ]
  const within: Record<string, boolean> = {}
  for (const scenario of new Set(rows.map((r) => r.scenario))) {
    const of = rows.filter((r) => r.scenario === scenario)
    within[scenario] = of.every((r) => r.ratio <= 2)
    out.push(
      `${scenario}: ${within[scenario] ? 'within' : 'NOT within'} 2× at 1M records (${of.map((r) => `${r.mode} ${r.ratio.toFixed(2)}×`).join(', ')})`,
    )
  }
  process.stdout.write(`\n${out.join('\n')}\n`)
  fs.writeFileSync(
    path.join(root, 'bench', 'scale-results.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        database: pg ? 'postgres' : 'sqlite',
        cores: os.cpus().length,
        connections,
        warmupSeconds,
        durationSeconds,
        dataSets: Object.fromEntries(sets.map((s) => [s.size, { ...s.counts, seedSeconds: s.seedSeconds }])),
        results: rows,
        withinTwoTimes: within,
      },
      null,
      2,
    )}\n`,
  )
}

await main()
