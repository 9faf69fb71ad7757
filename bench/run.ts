// `npm run bench`: load benchmarks of hostapi beside reference servers, one table per run.
// Never part of `npm test`. Every server and the load generator run in processes of their own; loopback only.
//   hostapi       — over HTTPS, authenticated, on SQLite; with DATABASE_URL (postgres://) on PostgreSQL as well, one
//                   mode after the other, and with REDIS_URL too on two instances behind the bench's round-robin
//   bare Fastify  — one Fastify route on the same certificate answering the same bytes (status, headers, body)
//   ceiling       — a bare node:https server on the same certificate answering the same bytes (status, headers, body);
//                   measured again beside each later one-instance mode, whose ratios use the ceiling beside it
//   Prism         — @stoplight/prism-cli mocking the committed openapi.json over plain HTTP
// Each hostapi figure comes with the database round trips per request, read from the server's own metrics.
// Then cold start (spawn to first authenticated answer), the built-in DNS server (bench/dns.ts) and the scale run
// (bench/scale.ts).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { scenarios, seedBenchmarkData, DEMO_KEY, type BenchData, type Scenario } from './scenarios.js'
import { budgetTables, cpuTimeUs, profileCeiling, profileHostapi, type Breakdown } from './budget.js'
import {
  call,
  connections,
  dist,
  durationSeconds,
  freePort,
  load,
  loadInBackground,
  root,
  serverCounts,
  waitForLine,
  warmupSeconds,
  type Figures,
  type ServerCounts,
} from './harness.js'

/** Response headers Node's HTTP server writes on its own. */
const NODE_WRITES = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'])
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null
/** Reads the server's metrics (the admin API on the main listener). */
const ADMIN_TOKEN = 'adm_benchmarkBenchmarkBenchmark01'
const PG_URL = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : null
const REDIS_URL = process.env.REDIS_URL || null
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? (PG_URL && REDIS_URL ? 2 : 1))
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 5)
const auth = { 'API-Key': DEMO_KEY }

/** How hostapi runs in one part of the bench. */
interface Mode {
  label: string
  /** The server's database and Redis. */
  env: Record<string, string>
  /** The PostgreSQL schema the mode seeds and drops, or null on SQLite. */
  schema: string | null
  instances: number
}

interface Result extends Figures {
  scenario: string
  server: string
  /** CPU time the server's processes used (all their threads), per request answered, in µs. */
  cpuUs?: number
  /** Database round trips per request answered, as the server counted them (hostapi only). */
  roundTrips?: number
}

/** The cross-instance check: writes on one instance, each followed at once by a read on the other. */
interface Staleness {
  rounds: number
  stale: number
  errors: number
  /** The read load on both instances the check ran under. */
  load: Figures
}

const progress = (text: string) => process.stderr.write(`bench: ${text}\n`)

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Spawn to the first successful answer on `url`, in ms. */
async function coldStart(start: () => ChildProcess, url: string, headers: Record<string, string>): Promise<number> {
  const t0 = performance.now()
  const child = start()
  try {
    for (;;) {
      if (performance.now() - t0 > 60_000) throw new Error(`no answer from ${url} within 60 s`)
      try {
        if ((await call(url, 'GET', headers)).status === 200) return performance.now() - t0
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 2))
    }
  } finally {
    child.kill('SIGKILL')
    await new Promise((r) => child.once('exit', r))
  }
}

/** The modes of this run: SQLite alone (no Redis); PostgreSQL (with Redis when set); two instances on both. */
function modes(): Mode[] {
  const sqlite: Mode = { label: 'SQLite', env: { DATABASE_URL: '', REDIS_URL: '' }, schema: null, instances: 1 }
  if (!PG_URL) return [sqlite]
  const pg = (n: number): Mode => {
    const schema = `bench_${process.pid}_${n}`
    return {
      label: n > 1 ? `PostgreSQL, ${n} instances` : 'PostgreSQL',
      env: { DATABASE_URL: PG_URL, REDIS_URL: REDIS_URL ?? '', HOSTAPI_DB_SCHEMA: schema },
      schema,
      instances: n,
    }
  }
  return [sqlite, pg(1), ...(INSTANCES > 1 ? [pg(INSTANCES)] : [])]
}

/** The server of bench/servers/round-trip.ts, in the results. */
const ROUND_TRIP = 'one round trip (node:https + pg)'

/**
 * Stores hostapi's answer to each read in `bench_answers` of the schema (id = the read's place in `reads`), for
 * bench/servers/round-trip.ts; gives each answer's headers but those Node writes itself.
 */
async function storeAnswers(
  schema: string,
  base: string,
  reads: { path: string; method: string }[],
  auth: Record<string, string>,
): Promise<Record<string, string>[]> {
  const pg = await import('pg')
  const client = new pg.default.Client({ connectionString: PG_URL!, options: `-c search_path=${schema}` })
  await client.connect()
  try {
    await client.query('create table bench_answers (id integer primary key, body text not null)')
    const headers: Record<string, string>[] = []
    for (const [n, s] of reads.entries()) {
      const answer = await call(`${base}${s.path}`, s.method, auth)
      if (answer.status !== 200) throw new Error(`${s.path}: ${answer.status}`)
      await client.query('insert into bench_answers (id, body) values ($1, $2)', [n, answer.text])
      headers.push(
        Object.fromEntries(
          Object.entries(answer.headers).flatMap(([name, v]) =>
            NODE_WRITES.has(name) || typeof v !== 'string' ? [] : [[name, v]],
          ),
        ),
      )
    }
    return headers
  } finally {
    await client.end()
  }
}

async function dropSchema(schema: string): Promise<void> {
  const pg = await import('pg')
  const client = new pg.default.Client({ connectionString: PG_URL! })
  await client.connect()
  await client.query(`drop schema if exists ${schema} cascade`)
  await client.end()
}

async function main() {
  if (process.env.BENCH_NO_BUILD !== '1') execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-bench-'))
  const children: ChildProcess[] = []
  const results: Result[] = []
  let staleness: Staleness | null = null
  const cold: Record<string, number> = {}
  /** Profiles of the cached reads: hostapi's per mode, and the ceiling's, by scenario. */
  const profiles: Record<string, Record<string, Breakdown>> = {}
  const noProfile = process.env.BENCH_NO_PROFILE === '1'
  /** Starts the reference server `file` with `env`, loads scenario `s` on it, and records its figures as `name`. */
  const measureReference = async (name: string, file: string, env: NodeJS.ProcessEnv, s: Scenario) => {
    const ref = spawn(process.execPath, [dist(file)], { env, stdio: ['ignore', 'pipe', 'inherit'] })
    children.push(ref)
    const [, port] = await waitForLine(ref, /^ready (\d+)/)
    progress(`${s.name}: ${name}`)
    const cpu = cpuOf([ref])
    const figures = load(`https://127.0.0.1:${port}/api/v2${s.path}`, s.method, {}, s.body)
    const cpuUs = cpu()
    results.push({
      scenario: s.name,
      server: name,
      ...figures,
      cpuUs: cpuUs === null ? undefined : cpuUs / figures.requests,
    })
    ref.kill('SIGTERM')
    await new Promise((r) => ref.once('exit', r))
  }
  const baseEnv: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOSTAPI_DATA_DIR: dataDir,
    HOSTAPI_PORT: '0',
    HOSTAPI_DEMO_KEY: DEMO_KEY,
    HOSTAPI_LOG_LEVEL: 'warn',
    HOSTAPI_RATE_LIMIT: '1000000000',
    // Every load connection comes from one address: BENCH_CONNECTIONS may exceed the per-address cap.
    HOSTAPI_MAX_CONNECTIONS_PER_IP: '0',
    HOSTAPI_DNS_PORT: '0',
    // One process, beside one-process references (npm run bench:workers measures several).
    HOSTAPI_WORKERS: '1',
    HOSTAPI_ADMIN_TOKEN: ADMIN_TOKEN,
    // As a provider runs it: the sandbox's hooks (its request journal, its faults) are not installed.
    HOSTAPI_SANDBOX: '0',
  }
  delete baseEnv.HOSTAPI_ADMIN_PORT
  const startHostapi = (mode: Mode, port = 0, env: Record<string, string> = {}) =>
    spawn(process.execPath, [dist('src/cli/main.js'), 'serve'], {
      env: { ...baseEnv, ...mode.env, ...env, HOSTAPI_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
  const all = modes()
  try {
    progress('starting Prism')
    const prism = startPrism(await freePort(), ['ignore', 'pipe', 'inherit'])
    children.push(prism)
    const [, prismBase] = await waitForLine(prism, /Prism is listening on (http:\/\/\S+)/)

    for (const [i, mode] of all.entries()) {
      progress(`${mode.label}: seeding`)
      const data = await seedBenchmarkData({ ...baseEnv, ...mode.env }, mode.schema)
      const bases: string[] = []
      const servers: ChildProcess[] = []
      for (let n = 0; n < mode.instances; n++) {
        progress(`${mode.label}: starting hostapi`)
        const server = startHostapi(mode)
        children.push(server)
        servers.push(server)
        bases.push((await waitForLine(server, /^hostapi listening on (\S+)/))[1])
      }
      const label = `hostapi (${mode.label})`
      // The references answer the same bytes whatever the database: measured beside the first mode (the ceiling again
      // beside each later one-instance mode, below).
      const references = i === 0
      for (const s of scenarios(data)) {
        if (only && !only.test(s.name)) continue
        const urls = bases.map((b) => `${b}${s.path}`)
        const sample = await call(urls[0], s.method, auth, s.body)
        if (sample.status !== 200) throw new Error(`${s.name}: ${sample.status} ${sample.text.slice(0, 200)}`)
        progress(`${s.name}: ${label}`)
        const before = await countsOf(bases)
        const cpu = cpuOf(servers)
        const figures = load(urls.length > 1 ? urls : urls[0], s.method, auth, s.body)
        const cpuUs = cpu()
        const after = await countsOf(bases)
        results.push({
          scenario: s.name,
          server: label,
          ...figures,
          roundTrips: perRequest(before, after),
          cpuUs: cpuUs === null ? undefined : cpuUs / figures.requests,
        })
        // The ceiling beside every one-instance mode too: this machine's speed drifts between modes.
        const ceilingOnly = !references && mode.instances === 1
        if (!references && !ceilingOnly) continue
        const bodyFile = path.join(dataDir, 'body.json')
        fs.writeFileSync(bodyFile, sample.text)
        // The references answer the same bytes: hostapi's headers too, but those Node writes itself.
        const headersFile = path.join(dataDir, 'headers.json')
        fs.writeFileSync(
          headersFile,
          JSON.stringify(Object.fromEntries(Object.entries(sample.headers).filter(([name]) => !NODE_WRITES.has(name)))),
        )
        const refs: [string, string][] = ceilingOnly
          ? [[`ceiling (node:https, beside ${mode.label})`, 'bench/servers/ceiling.js']]
          : [
              ['bare Fastify', 'bench/servers/bare-fastify.js'],
              ['ceiling (node:https)', 'bench/servers/ceiling.js'],
            ]
        for (const [name, file] of refs) {
          const refEnv = {
            ...process.env,
            BENCH_CERT: path.join(dataDir, 'tls-cert.pem'),
            BENCH_KEY: path.join(dataDir, 'tls-key.pem'),
            BENCH_BODY_FILE: bodyFile,
            BENCH_HEADERS_FILE: headersFile,
          }
          await measureReference(name, file, refEnv, s)
          if (references && name.startsWith('ceiling') && s.method === 'GET' && !noProfile) {
            progress(`${s.name}: profiling the ceiling`)
            profiles.ceiling ??= {}
            profiles.ceiling[s.name] = await profileCeiling(
              refEnv,
              path.join(dataDir, 'profile-ceiling'),
              (p) => `https://127.0.0.1:${p}/api/v2${s.path}`,
            )
          }
        }
        if (ceilingOnly) continue
        progress(`${s.name}: Prism`)
        // Prism answers 400 to a path with a trailing slash; it gets the same request without it.
        results.push({
          scenario: s.name,
          server: 'Prism (HTTP)',
          ...load(`${prismBase}/api/v2${s.path.replace(/\/(\?|$)/, '$1')}`, s.method, auth, s.body),
        })
      }
      if (bases.length > 1) {
        progress(`${mode.label}: cross-instance staleness`)
        staleness = await stalenessCheck(bases, data)
      }
      for (const server of servers) {
        server.kill('SIGTERM')
        await new Promise((r) => server.once('exit', r))
      }
      if (mode.instances === 1) {
        const reads = scenarios(data).filter((s) => s.method === 'GET' && (!only || only.test(s.name)))
        progress(`${mode.label}: uncached reads`)
        const uncached = startHostapi(mode, 0, { HOSTAPI_RESPONSE_CACHE_MB: '0' })
        children.push(uncached)
        const [, base] = await waitForLine(uncached, /^hostapi listening on (\S+)/)
        for (const s of reads) {
          progress(`${s.name}: ${label}, uncached`)
          const before = await countsOf([base])
          const cpu = cpuOf([uncached])
          const figures = load(`${base}${s.path}`, s.method, auth)
          const cpuUs = cpu()
          const after = await countsOf([base])
          results.push({
            scenario: s.name,
            server: `hostapi (${mode.label}, uncached)`,
            ...figures,
            roundTrips: perRequest(before, after),
            cpuUs: cpuUs === null ? undefined : cpuUs / figures.requests,
          })
        }
        // The floor of a read that goes to the database: hostapi's answers read back as they are, one statement each.
        const answers = mode.schema ? await storeAnswers(mode.schema, base, reads, auth) : []
        uncached.kill('SIGTERM')
        await new Promise((r) => uncached.once('exit', r))
        if (mode.schema) {
          for (const [n, s] of reads.entries()) {
            const headersFile = path.join(dataDir, 'round-trip-headers.json')
            fs.writeFileSync(headersFile, JSON.stringify(answers[n]))
            await measureReference(
              ROUND_TRIP,
              'bench/servers/round-trip.js',
              {
                ...process.env,
                BENCH_CERT: path.join(dataDir, 'tls-cert.pem'),
                BENCH_KEY: path.join(dataDir, 'tls-key.pem'),
                BENCH_HEADERS_FILE: headersFile,
                BENCH_PG_URL: PG_URL ?? '',
                BENCH_PG_SCHEMA: mode.schema,
                BENCH_ANSWER_ID: String(n),
              },
              s,
            )
          }
        }
        if (!noProfile) {
          progress(`${mode.label}: profiling the cached reads`)
          profiles[label] = await profileHostapi(
            { ...baseEnv, ...mode.env },
            path.join(dataDir, 'profile'),
            reads.map((s) => ({ name: s.name, method: s.method, path: s.path })),
            auth,
          )
        }
        const runs: number[] = []
        if (COLD_RUNS > 0) progress(`${mode.label}: cold starts`)
        for (let n = 0; n < COLD_RUNS; n++) {
          const port = await freePort()
          runs.push(await coldStart(() => startHostapi(mode, port), `https://127.0.0.1:${port}/api/v2/whoami`, auth))
        }
        if (runs.length > 0) cold[label] = median(runs)
      }
      if (mode.schema) await dropSchema(mode.schema)
    }

    prism.kill('SIGTERM')
    const runs: number[] = []
    if (COLD_RUNS > 0) progress('cold starts: Prism')
    for (let n = 0; n < COLD_RUNS; n++) {
      const port = await freePort()
      runs.push(await coldStart(() => startPrism(port, 'ignore'), `http://127.0.0.1:${port}/api/v2/whoami`, auth))
    }
    if (runs.length > 0) cold.Prism = median(runs)
  } finally {
    for (const c of children) c.kill('SIGKILL')
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  report(results, staleness, cold, profiles)
  if (process.env.BENCH_SKIP_DNS !== '1') {
    progress('DNS server')
    process.stdout.write('\nDNS server (npm run bench:dns):\n')
    execFileSync(process.execPath, [dist('bench/dns.js')], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
  }
  if (process.env.BENCH_SKIP_SCALE !== '1') {
    process.stdout.write('\nScale (npm run bench:scale):\n')
    execFileSync(process.execPath, [dist('bench/scale.js')], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, BENCH_NO_BUILD: '1' },
    })
  }
}

/** From now, the CPU time the processes use until the function returned is called, in µs (null without /proc). */
function cpuOf(processes: ChildProcess[]): () => number | null {
  const sum = () =>
    processes.reduce<number | null>((a, p) => {
      const t = cpuTimeUs(p.pid)
      return a === null || t === null ? null : a + t
    }, 0)
  const before = sum()
  return () => {
    const after = sum()
    return before === null || after === null ? null : after - before
  }
}

/** The counts of every instance, summed. */
async function countsOf(bases: string[]): Promise<ServerCounts> {
  const each = await Promise.all(bases.map((b) => serverCounts(b.replace(/\/api\/v2$/, ''), ADMIN_TOKEN)))
  return each.reduce((a, b) => ({ requests: a.requests + b.requests, roundTrips: a.roundTrips + b.roundTrips }))
}

/**
 * Round trips per request between two readings. The window holds the warm-up, the jobs' polling and the reading
 * itself as well: a few dozen round trips beside tens of thousands of requests.
 */
function perRequest(before: ServerCounts, after: ServerCounts): number {
  const requests = after.requests - before.requests
  return requests > 0 ? (after.roundTrips - before.roundTrips) / requests : 0
}

/**
 * Writes a TXT record through one instance and, as soon as the write is answered, reads the zone through the
 * other, alternating the direction, while both serve a read load on the same zone (so a cache is being filled
 * and read meanwhile). A read that misses the value just written is stale.
 */
async function stalenessCheck(bases: string[], data: BenchData): Promise<Staleness> {
  const zone = `/domains/${data.bigZone}/dns`
  const background = loadInBackground(
    bases.map((b) => `${b}${zone}`),
    'GET',
    auth,
    { warmupSeconds: 0, durationSeconds },
  )
  let done = false
  const finished = background.finally(() => {
    done = true
  })
  const result = { rounds: 0, stale: 0, errors: 0 }
  while (!done) {
    const n = result.rounds++
    const [writer, reader] = n % 2 ? [bases[1], bases[0]] : [bases[0], bases[1]]
    const value = `stale-check-${process.pid}-${n}`
    const record = { type: 'TXT', name: '_stale-check', value, ttl: 120 }
    const written = await call(`${writer}${zone}`, 'PATCH', auth, JSON.stringify({ record }))
    const read = written.status === 200 ? await call(`${reader}${zone}`, 'GET', auth) : null
    if (read?.status !== 200) {
      result.errors++
      continue
    }
    const records = JSON.parse(read.text).data.records as { value: string }[]
    if (!records.some((r) => r.value === value)) result.stale++
  }
  return { ...result, load: await finished }
}
function startPrism(port: number, stdio: 'ignore' | ['ignore', 'pipe', 'inherit']): ChildProcess {
  return spawn(
    path.join(root, 'node_modules/.bin/prism'),
    ['mock', path.join(root, 'openapi.json'), '-h', '127.0.0.1', '-p', String(port)],
    { stdio },
  )
}

/** A table with a header rule, columns padded to their widest cell. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ')
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)]
}

const fixed = (x: number | undefined, digits = 2) => (x === undefined ? '' : x.toFixed(digits))

function report(
  results: Result[],
  staleness: Staleness | null,
  cold: Record<string, number>,
  profiles: Record<string, Record<string, Breakdown>>,
) {
  const out: string[] = []
  out.push(
    `${connections} connections, ${warmupSeconds} s warm-up, ${durationSeconds} s measured, ` +
      `${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`,
    '',
  )
  out.push(
    ...table(
      ['scenario', 'server', 'req/s', 'p50', 'p99', 'errors', 'db round trips/req'],
      results.map((r) => [
        r.scenario,
        r.server,
        r.rps.toFixed(0),
        `${r.p50} ms`,
        `${r.p99} ms`,
        String(r.errors),
        fixed(r.roundTrips),
      ]),
    ),
    '',
  )
  const of = (scenario: string, server: string) =>
    results.find((r) => r.scenario === scenario && r.server.startsWith(server))
  /** The ceiling measured beside a hostapi mode (`hostapi (PostgreSQL)`), or else beside the first. */
  const ceilingOf = (scenario: string, hostapi: string) =>
    results.find(
      (r) => r.scenario === scenario && r.server === `ceiling (node:https, beside ${hostapi.slice(9, -1)})`,
    ) ?? of(scenario, 'ceiling (node:https)')
  const scenarioNames = [...new Set(results.map((r) => r.scenario))]
  const ratios: Record<string, Record<string, number>> = {}
  for (const scenario of scenarioNames) {
    ratios[scenario] = {}
    for (const h of results.filter((r) => r.scenario === scenario && r.server.startsWith('hostapi'))) {
      const parts: string[] = []
      // The SQLite row keeps the plain keys; the others are prefixed with their mode.
      const prefix =
        h.server === 'hostapi (SQLite)' ? '' : `${h.server.slice(9, -1).toLowerCase().replace(/\W+/g, '_')}_`
      for (const [key, name] of [
        ['bare_fastify', 'bare Fastify'],
        ['ceiling', 'ceiling'],
        ['prism', 'Prism'],
      ] as const) {
        const rps = (name === 'ceiling' ? ceilingOf(scenario, h.server) : of(scenario, name))?.rps
        if (rps) {
          ratios[scenario][`${prefix}${key}`] = h.rps / rps
          parts.push(`${(h.rps / rps).toFixed(2)}x ${name}`)
        }
      }
      out.push(`${scenario}: ${h.server} = ${parts.join(', ')}`)
    }
  }
  if (results.some((r) => r.server === 'hostapi (PostgreSQL)')) {
    out.push('', 'PostgreSQL beside SQLite (one instance each):', '')
    const rows = scenarioNames.map((scenario) => {
      const lite = of(scenario, 'hostapi (SQLite)')
      const pg = of(scenario, 'hostapi (PostgreSQL)')
      const ceiling = of(scenario, 'ceiling (node:https)')?.rps
      const pgCeiling = ceilingOf(scenario, 'hostapi (PostgreSQL)')?.rps
      const prism = of(scenario, 'Prism')?.rps
      if (lite && pg) ratios[scenario].postgres_over_sqlite = pg.rps / lite.rps
      return [
        scenario,
        fixed(lite?.rps, 0),
        fixed(pg?.rps, 0),
        lite && pg ? fixed(pg.rps / lite.rps) : '',
        lite && ceiling ? fixed(lite.rps / ceiling) : '',
        pg && pgCeiling ? fixed(pg.rps / pgCeiling) : '',
        pg && prism ? fixed(pg.rps / prism, 1) : '',
        fixed(lite?.roundTrips),
        fixed(pg?.roundTrips),
      ]
    })
    out.push(
      ...table(
        [
          'scenario',
          'SQLite req/s',
          'PG req/s',
          'PG ÷ SQLite',
          'SQLite × ceiling',
          'PG × ceiling',
          'PG × Prism',
          'round trips/req SQLite',
          'PG',
        ],
        rows,
      ),
    )
  }
  const uncached = results.filter((r) => r.server.endsWith(', uncached)'))
  if (uncached.length) {
    out.push(
      '',
      'Reads without the response cache (HOSTAPI_RESPONSE_CACHE_MB=0) beside the cached figure, and on PostgreSQL beside one round trip (bench/servers/round-trip.ts: the answer read back from a one-row table by a bare node:https server over pg):',
      '',
    )
    out.push(
      ...table(
        [
          'scenario',
          'database',
          'cached req/s',
          'uncached req/s',
          'uncached ÷ cached',
          'one round trip req/s',
          'round trip ÷ cached',
          'uncached ÷ round trip',
          'round trips/req',
          'CPU µs/req: cached',
          'uncached',
          'round trip',
        ],
        uncached.map((r) => {
          const mode = r.server.slice(9, -', uncached)'.length)
          const cached = of(r.scenario, `hostapi (${mode})`)
          // The round-trip floor reads PostgreSQL: beside that mode's rows.
          const floor = mode === 'PostgreSQL' ? of(r.scenario, ROUND_TRIP) : undefined
          if (cached) ratios[r.scenario][`${mode.toLowerCase()}_uncached_over_cached`] = r.rps / cached.rps
          if (cached && floor) ratios[r.scenario].round_trip_over_cached = floor.rps / cached.rps
          return [
            r.scenario,
            mode,
            fixed(cached?.rps, 0),
            r.rps.toFixed(0),
            cached ? fixed(r.rps / cached.rps) : '',
            fixed(floor?.rps, 0),
            cached && floor ? fixed(floor.rps / cached.rps) : '',
            floor ? fixed(r.rps / floor.rps) : '',
            fixed(r.roundTrips),
            fixed(cached?.cpuUs, 0),
            fixed(r.cpuUs, 0),
            fixed(floor?.cpuUs, 0),
          ]
        }),
      ),
    )
  }
  for (const [label, byScenario] of Object.entries(profiles)) {
    if (label === 'ceiling') continue
    const rows = Object.keys(byScenario).flatMap((scenario) => {
      const ceiling = ceilingOf(scenario, label)
      const hostapi = results.find((r) => r.scenario === scenario && r.server === label)
      return ceiling && hostapi
        ? [
            {
              scenario,
              ceiling: { rps: ceiling.rps, cpuUs: ceiling.cpuUs, profile: profiles.ceiling?.[scenario] },
              hostapi: { rps: hostapi.rps, cpuUs: hostapi.cpuUs, profile: byScenario[scenario] },
            },
          ]
        : []
    })
    out.push(
      '',
      `Per-request budget, ${label}, cached reads: per request, wall µs (1,000,000 ÷ req/s) and the server's CPU µs (all its threads), in the run above`,
      '',
    )
    out.push(...budgetTables(table, rows))
  }
  const several = results.filter((r) => / instances\)$/.test(r.server))
  if (several.length) {
    out.push('', `${several[0].server.slice(9, -1)} on one database and one Redis, round-robin by connection:`, '')
    out.push(
      ...table(
        ['scenario', 'req/s', 'p99', 'errors', '× one instance', 'round trips/req'],
        several.map((r) => {
          const one = of(r.scenario, 'hostapi (PostgreSQL)')
          return [
            r.scenario,
            r.rps.toFixed(0),
            `${r.p99} ms`,
            String(r.errors),
            one ? fixed(r.rps / one.rps) : '',
            fixed(r.roundTrips),
          ]
        }),
      ),
    )
  }
  if (staleness)
    out.push(
      '',
      `cross-instance staleness: ${staleness.rounds} writes each read back at once through the other instance ` +
        `(under ${staleness.load.rps.toFixed(0)} reads/s of the same zone on both): ${staleness.stale} stale, ` +
        `${staleness.errors} errors`,
    )
  const colds = Object.entries(cold)
  if (colds.length)
    out.push(
      '',
      `cold start (spawn to first authenticated 200, median of ${COLD_RUNS}): ` +
        colds.map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join(', '),
    )
  process.stdout.write(`\n${out.join('\n')}\n`)
  fs.writeFileSync(
    path.join(root, 'bench', 'results.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        cores: os.cpus().length,
        connections,
        warmupSeconds,
        durationSeconds,
        results,
        ratios,
        staleness,
        coldStartMs: cold,
        profiles,
      },
      null,
      2,
    )}\n`,
  )
}

await main()
