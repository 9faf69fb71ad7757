// `npm run bench`: load benchmarks of hostapi beside a bare Fastify route on the same certificate.
// Never part of `npm test`. Servers and the load generator each run in their own process; loopback only.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import https from 'node:https'
import readline from 'node:readline'

// Runs from bench/ (tsx) or dist/bench/ (compiled): the root is where package.json is.
const here = path.dirname(new URL(import.meta.url).pathname)
const root = fs.existsSync(path.join(here, '..', 'package.json')) ? path.resolve(here, '..') : path.resolve(here, '..', '..')
const dist = (p: string) => path.join(root, 'dist', p)
const DEMO_KEY = 'benchmarkBenchmarkBenchmark0001'
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const durationSeconds = Number(process.env.BENCH_DURATION ?? 10)
const warmupSeconds = Number(process.env.BENCH_WARMUP ?? 3)

interface Result { scenario: string; server: string; rps: number; p50: number; p99: number; errors: number; requests: number }

function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}`)), timeoutMs)
    const rl = readline.createInterface({ input: child.stdout! })
    rl.on('line', (line) => {
      const m = line.match(pattern)
      if (m) {
        clearTimeout(timer)
        resolve(m)
      }
    })
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
}

function get(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    https.get(url, { headers, rejectUnauthorized: false }, (res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode} ${body}`))))
    }).on('error', reject)
  })
}

function load(url: string, method: string, headers: Record<string, string>, body?: string): Omit<Result, 'scenario' | 'server'> {
  const job = { url, method, headers, body, connections, warmupSeconds, durationSeconds }
  const out = execFileSync(process.execPath, [dist('bench/load.js'), JSON.stringify(job)], { encoding: 'utf8', maxBuffer: 1 << 20 })
  return JSON.parse(out.trim().split('\n').pop()!)
}

async function main() {
  if (process.env.BENCH_NO_BUILD !== '1') execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' })
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-bench-'))
  const children: ChildProcess[] = []
  const results: Result[] = []
  try {
    const hostapi = spawn(process.execPath, [dist('src/cli/main.js'), 'serve'], {
      env: { ...process.env, HOSTAPI_DATA_DIR: dataDir, HOSTAPI_PORT: '0', HOSTAPI_DEMO_KEY: DEMO_KEY, HOSTAPI_LOG_LEVEL: 'warn',
        HOSTAPI_RATE_LIMIT: '1000000', HOSTAPI_DNS_PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    children.push(hostapi)
    const [, base] = await waitForLine(hostapi, /^hostapi listening on (\S+)/)
    await waitForLine(hostapi, /^Demo API key:/).catch(() => undefined)
    const auth = { 'API-Key': DEMO_KEY }

    const scenarios = [{ name: 'GET /whoami', path: '/whoami' }]
    for (const s of scenarios) {
      const body = await get(`${base}${s.path}`, auth)
      const bodyFile = path.join(dataDir, 'body.json')
      fs.writeFileSync(bodyFile, body)
      const bare = spawn(process.execPath, [dist('bench/servers/bare-fastify.js')], {
        env: { ...process.env, BENCH_CERT: path.join(dataDir, 'tls-cert.pem'), BENCH_KEY: path.join(dataDir, 'tls-key.pem'), BENCH_BODY_FILE: bodyFile },
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      children.push(bare)
      const [, barePort] = await waitForLine(bare, /^ready (\d+)/)
      results.push({ scenario: s.name, server: 'hostapi (SQLite)', ...load(`${base}${s.path}`, 'GET', auth) })
      results.push({ scenario: s.name, server: 'bare Fastify', ...load(`https://127.0.0.1:${barePort}/api/v2${s.path}`, 'GET', {}) })
      bare.kill('SIGTERM')
    }
  } finally {
    for (const c of children) c.kill('SIGTERM')
    fs.rmSync(dataDir, { recursive: true, force: true })
  }

  const rows = results.map((r) => [r.scenario, r.server, r.rps.toFixed(0), `${r.p50} ms`, `${r.p99} ms`, String(r.errors)])
  const header = ['scenario', 'server', 'req/s', 'p50', 'p99', 'errors']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ')
  process.stdout.write(`\n${connections} connections, ${warmupSeconds} s warm-up, ${durationSeconds} s measured, ${os.cpus().length} cores\n\n`)
  process.stdout.write(`${line(header)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}\n\n`)
  const ratios: Record<string, number> = {}
  for (const scenario of new Set(results.map((r) => r.scenario))) {
    const h = results.find((r) => r.scenario === scenario && r.server.startsWith('hostapi'))!
    const b = results.find((r) => r.scenario === scenario && r.server === 'bare Fastify')!
    ratios[scenario] = h.rps / b.rps
    process.stdout.write(`${scenario}: hostapi / bare Fastify = ${ratios[scenario].toFixed(2)}\n`)
  }
  fs.writeFileSync(path.join(root, 'bench', 'results.json'),
    JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, connections, durationSeconds, results, ratios }, null, 2) + '\n')
}

await main()
