// `npm run bench:workers`: `hostapi serve --workers N` for N = 1 and 2 (BENCH_WORKERS, comma separated) on the
// benchmark's data: GET /whoami, GET /domains (response cache on) and the DNS PATCH; req/s, p99, and the servers'
// CPU per request (the primary's and the workers' user + system time from /proc over the measured window, divided
// by the requests answered in it). The load generator runs on the same machine: it takes a share of its cores.
// Writes bench/workers-results.json. SQLite, or PostgreSQL when DATABASE_URL is set (a schema of its own per run).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pgLib from 'pg'
import { scenarios, seedBenchmarkData, DEMO_KEY } from './scenarios.js'
import { call, connections, dist, durationSeconds, root, waitForLine, warmupSeconds, type Figures } from './harness.js'

const WORKERS = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number)
const SCENARIOS = [/^GET \/whoami$/, /^GET \/domains \(/, /^PATCH /]
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
const pg = process.env.DATABASE_URL?.startsWith('postgres') ?? false
const progress = (text: string) => process.stderr.write(`bench:workers: ${text}\n`)

/** User + system CPU seconds a process has used so far (0 once it is gone). */
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS
  } catch {
    return 0
  }
}

interface Row {
  workers: number
  scenario: string
  rps: number
  p99: number
  errors: number
  requests: number
  serverCpuSeconds: number
  cpuPerRequestUs: number
}

async function run(workers: number, children: ChildProcess[]): Promise<Row[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `hostapi-bench-workers-${workers}-`))
  const schema = pg ? `bench_workers_${workers}_${process.pid}` : null
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOSTAPI_DATA_DIR: dataDir,
    HOSTAPI_PORT: '0',
    HOSTAPI_DNS_PORT: '0',
    HOSTAPI_DEMO_KEY: DEMO_KEY,
    HOSTAPI_SANDBOX: '0',
    HOSTAPI_WORKERS: String(workers),
    HOSTAPI_LOG_LEVEL: 'warn',
    HOSTAPI_REQUEST_LOG: '0',
    HOSTAPI_RATE_LIMIT: '1000000000',
    HOSTAPI_MAX_CONNECTIONS_PER_IP: '0',
    ...(schema ? { HOSTAPI_DB_SCHEMA: schema } : {}),
  }
  progress(`seeding (${workers} worker${workers > 1 ? 's' : ''})`)
  const data = await seedBenchmarkData(env, schema)
  const server = spawn(process.execPath, [dist('src/cli/main.js'), 'serve'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(server)
  const rows: Row[] = []
  try {
    const [, base] = await waitForLine(server, /^hostapi listening on (\S+)/, 180_000)
    const pids = [present(server.pid), ...workerPids(present(server.pid))]
    progress(`serving: pids ${pids.join(', ')}`)
    const auth = { 'API-Key': DEMO_KEY }
    for (const s of scenarios(data).filter((x) => SCENARIOS.some((re) => re.test(x.name)))) {
      const url = `${base}${s.path}`
      const sample = await call(url, s.method, auth, s.body)
      if (sample.status !== 200) throw new Error(`${s.name}: ${sample.status} ${sample.text.slice(0, 200)}`)
      const headers = s.body ? { ...auth, 'content-type': 'application/json' } : auth
      if (warmupSeconds > 0) await load(url, s.method, headers, s.body, warmupSeconds)
      const before = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
      const f = await load(url, s.method, headers, s.body, durationSeconds)
      const used = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - before
      const row = {
        workers,
        scenario: s.name,
        rps: f.rps,
        p99: f.p99,
        errors: f.errors,
        requests: f.requests,
        serverCpuSeconds: Number(used.toFixed(2)),
        cpuPerRequestUs: f.requests ? Math.round((used / f.requests) * 1e6) : 0,
      }
      progress(JSON.stringify(row))
      rows.push(row)
    }
  } finally {
    server.kill('SIGTERM')
    await new Promise((r) =>
      server.exitCode === null && server.signalCode === null ? server.once('exit', r) : r(null),
    )
    fs.rmSync(dataDir, { recursive: true, force: true })
    if (schema) await dropSchema(schema)
  }
  return rows
}

/** Load with autocannon in a process of its own (dist/bench/load.js) for `seconds`, no warm-up. */
function load(url: string, method: string, headers: Record<string, string>, body: string | undefined, seconds: number) {
  const job = JSON.stringify({ url, method, headers, body, connections, warmupSeconds: 0, durationSeconds: seconds })
  return new Promise<Figures>((resolve, reject) =>
    execFile(process.execPath, [dist('bench/load.js'), job], { encoding: 'utf8', maxBuffer: 1 << 20 }, (err, out) =>
      err ? reject(err) : resolve(JSON.parse(out.trim().split('\n').pop() ?? '{}') as Figures),
    ),
  )
}

function present(pid: number | undefined): number {
  if (pid === undefined) throw new Error('the server did not start')
  return pid
}

/** The server's children (its workers), from /proc. */
function workerPids(parent: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8')
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent
      } catch {
        return false
      }
    })
    .map(Number)
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pgLib.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  await client.query(`drop schema if exists ${schema} cascade`)
  await client.end()
}

async function main() {
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-changed'], { cwd: root, stdio: 'inherit' })
  const children: ChildProcess[] = []
  process.on('exit', () => {
    for (const c of children) c.kill('SIGKILL')
  })
  const rows: Row[] = []
  for (const n of WORKERS) rows.push(...(await run(n, children)))
  const result = {
    date: new Date().toISOString(),
    database: pg ? 'postgres' : 'sqlite',
    cores: os.availableParallelism(),
    connections,
    durationSeconds,
    note: 'the load generator (autocannon, one process) runs on the same cores as the server',
    rows,
  }
  fs.writeFileSync(path.join(root, 'bench', 'workers-results.json'), `${JSON.stringify(result, null, 2)}\n`)
  process.stdout.write('workers | scenario | req/s | p99 ms | server CPU per request (µs)\n')
  for (const r of rows)
    process.stdout.write(`${r.workers} | ${r.scenario} | ${Math.round(r.rps)} | ${r.p99} | ${r.cpuPerRequestUs}\n`)
}

await main()
