// `npm run bench`: load benchmarks of hostapi beside reference servers, one table per run.
// Never part of `npm test`. Every server and the load generator run in processes of their own; loopback only.
//   hostapi       — over HTTPS, authenticated, on SQLite (or on PostgreSQL when DATABASE_URL is set)
//   bare Fastify  — one Fastify route on the same certificate answering the same bytes (status, headers, body)
//   ceiling       — a bare node:https server on the same certificate answering the same bytes (status, headers, body)
//   Prism         — @stoplight/prism-cli mocking the committed openapi.json over plain HTTP
// then cold start (spawn to first authenticated answer), the built-in DNS server (bench/dns.ts) and the scale run
// (bench/scale.ts).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { scenarios, seedBenchmarkData, DEMO_KEY } from './scenarios.js'
import {
  call,
  connections,
  dist,
  durationSeconds,
  freePort,
  load,
  root,
  waitForLine,
  warmupSeconds,
  type Figures,
} from './harness.js'

/** Response headers Node's HTTP server writes on its own. */
const NODE_WRITES = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'])
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null

interface Result extends Figures {
  scenario: string
  server: string
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

async function main() {
  if (process.env.BENCH_NO_BUILD !== '1') execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-bench-'))
  const children: ChildProcess[] = []
  const results: Result[] = []
  const pg = process.env.DATABASE_URL?.startsWith('postgres')
  const schema = pg ? `bench_${process.pid}` : null
  const serverEnv = {
    ...process.env,
    HOSTAPI_DATA_DIR: dataDir,
    HOSTAPI_PORT: '0',
    HOSTAPI_DEMO_KEY: DEMO_KEY,
    HOSTAPI_LOG_LEVEL: 'warn',
    HOSTAPI_RATE_LIMIT: '1000000000',
    HOSTAPI_DNS_PORT: '0',
    ...(schema ? { HOSTAPI_DB_SCHEMA: schema } : {}),
  }
  const startHostapi = (port = 0) =>
    spawn(process.execPath, [dist('src/cli/main.js'), 'serve'], {
      env: { ...serverEnv, HOSTAPI_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
  let cold: { hostapi: number; prism: number } | null = null
  try {
    progress('seeding')
    const data = await seedBenchmarkData(serverEnv, schema)
    progress('starting hostapi')
    const hostapi = startHostapi()
    children.push(hostapi)
    const [, base] = await waitForLine(hostapi, /^hostapi listening on (\S+)/)
    const auth = { 'API-Key': DEMO_KEY }
    const cert = path.join(dataDir, 'tls-cert.pem')
    const key = path.join(dataDir, 'tls-key.pem')
    const label = pg ? 'hostapi (PostgreSQL)' : 'hostapi (SQLite)'

    progress('starting Prism')
    const prism = startPrism(await freePort(), ['ignore', 'pipe', 'inherit'])
    children.push(prism)
    const [, prismBase] = await waitForLine(prism, /Prism is listening on (http:\/\/\S+)/)

    for (const s of scenarios(data)) {
      if (only && !only.test(s.name)) continue
      const url = `${base}${s.path}`
      const sample = await call(url, s.method, auth, s.body)
      if (sample.status !== 200) throw new Error(`${s.name}: ${sample.status} ${sample.text.slice(0, 200)}`)
      const bodyFile = path.join(dataDir, 'body.json')
      fs.writeFileSync(bodyFile, sample.text)
      // The references answer the same bytes: hostapi's headers too, but those Node writes itself.
      const headersFile = path.join(dataDir, 'headers.json')
      fs.writeFileSync(
        headersFile,
        JSON.stringify(Object.fromEntries(Object.entries(sample.headers).filter(([name]) => !NODE_WRITES.has(name)))),
      )
      progress(`${s.name}: ${label}`)
      results.push({ scenario: s.name, server: label, ...load(url, s.method, auth, s.body) })
      for (const [name, file] of [
        ['bare Fastify', 'bench/servers/bare-fastify.js'],
        ['ceiling (node:https)', 'bench/servers/ceiling.js'],
      ] as const) {
        const ref = spawn(process.execPath, [dist(file)], {
          env: {
            ...process.env,
            BENCH_CERT: cert,
            BENCH_KEY: key,
            BENCH_BODY_FILE: bodyFile,
            BENCH_HEADERS_FILE: headersFile,
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        })
        children.push(ref)
        const [, port] = await waitForLine(ref, /^ready (\d+)/)
        progress(`${s.name}: ${name}`)
        results.push({
          scenario: s.name,
          server: name,
          ...load(`https://127.0.0.1:${port}/api/v2${s.path}`, s.method, {}, s.body),
        })
        ref.kill('SIGTERM')
      }
      progress(`${s.name}: Prism`)
      // Prism answers 400 to a path with a trailing slash; it gets the same request without it.
      results.push({
        scenario: s.name,
        server: 'Prism (HTTP)',
        ...load(`${prismBase}/api/v2${s.path.replace(/\/(\?|$)/, '$1')}`, s.method, auth, s.body),
      })
    }

    hostapi.kill('SIGTERM')
    await new Promise((r) => hostapi.once('exit', r))
    prism.kill('SIGTERM')
    progress('cold starts')
    const runs = Number(process.env.BENCH_COLD_RUNS ?? 5)
    const hostapiRuns: number[] = []
    const prismRuns: number[] = []
    for (let i = 0; i < runs; i++) {
      const port = await freePort()
      hostapiRuns.push(await coldStart(() => startHostapi(port), `https://127.0.0.1:${port}/api/v2/whoami`, auth))
      prismRuns.push(await coldStart(() => startPrism(port, 'ignore'), `http://127.0.0.1:${port}/api/v2/whoami`, auth))
    }
    cold = { hostapi: median(hostapiRuns), prism: median(prismRuns) }
  } finally {
    for (const c of children) c.kill('SIGKILL')
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  report(results, cold)
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

function startPrism(port: number, stdio: 'ignore' | ['ignore', 'pipe', 'inherit']): ChildProcess {
  return spawn(
    path.join(root, 'node_modules/.bin/prism'),
    ['mock', path.join(root, 'openapi.json'), '-h', '127.0.0.1', '-p', String(port)],
    { stdio },
  )
}

function report(results: Result[], cold: { hostapi: number; prism: number } | null) {
  const rows = results.map((r) => [
    r.scenario,
    r.server,
    r.rps.toFixed(0),
    `${r.p50} ms`,
    `${r.p99} ms`,
    String(r.errors),
  ])
  const header = ['scenario', 'server', 'req/s', 'p50', 'p99', 'errors']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ')
  const out: string[] = []
  out.push(
    `${connections} connections, ${warmupSeconds} s warm-up, ${durationSeconds} s measured, ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`,
    '',
  )
  out.push(line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line), '')
  const ratios: Record<string, Record<string, number>> = {}
  for (const scenario of new Set(results.map((r) => r.scenario))) {
    const h = results.find((r) => r.scenario === scenario && r.server.startsWith('hostapi'))!
    const of = (name: string) => results.find((r) => r.scenario === scenario && r.server.startsWith(name))?.rps
    ratios[scenario] = {}
    const parts: string[] = []
    for (const [key, name] of [
      ['bare_fastify', 'bare Fastify'],
      ['ceiling', 'ceiling'],
      ['prism', 'Prism'],
    ] as const) {
      const rps = of(name)
      if (rps) {
        ratios[scenario][key] = h.rps / rps
        parts.push(`${(h.rps / rps).toFixed(2)}x ${name}`)
      }
    }
    out.push(`${scenario}: hostapi = ${parts.join(', ')}`)
  }
  if (cold)
    out.push(
      '',
      `cold start (spawn to first authenticated 200, median of ${process.env.BENCH_COLD_RUNS ?? 5}): hostapi ${cold.hostapi.toFixed(0)} ms, Prism ${cold.prism.toFixed(0)} ms`,
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
        coldStartMs: cold,
      },
      null,
      2,
    )}\n`,
  )
}

await main()
