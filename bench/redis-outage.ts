// `npm run bench:redis`: latency of authenticated requests while the Redis behind the shared limits fails.
// Never part of `npm test`. Starts a redis-server of its own on a free loopback port and hostapi (from the sources, SQLite,
// over HTTPS) against it, keeps BENCH_CONNECTIONS callers busy on GET /whoami, and moves through five phases of
// BENCH_PHASE seconds: Redis up, Redis killed (SIGKILL: connections drop), Redis started again, Redis hung (SIGSTOP:
// connections stay open, nothing answers), Redis resumed (SIGCONT). Prints p50/p99/max and non-200 answers per phase,
// for the whole phase and for its first second, and what /readyz said at the end of each phase
// (BENCH_DETAIL=1: requests/p50 second by second too).
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import { DEMO_KEY } from './scenarios.js'
import { call, freePort, root, waitForLine } from './harness.js'

const phaseSeconds = Number(process.env.BENCH_PHASE ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)

function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  return waitForLine(child, /Ready to accept connections/).then(() => child)
}

const pct = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]! : NaN
const ms = (x: number) => x.toFixed(1)

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-bench-redis-'))
  const redisPort = await freePort()
  let redis = await startRedis(redisPort)
  const server = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/main.ts'), 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOSTAPI_DATA_DIR: dataDir,
      HOSTAPI_PORT: '0',
      HOSTAPI_DEMO_KEY: DEMO_KEY,
      HOSTAPI_LOG_LEVEL: 'error',
      HOSTAPI_RATE_LIMIT: '1000000000',
      // Every load connection comes from one address: BENCH_CONNECTIONS may exceed the per-address cap.
      HOSTAPI_MAX_CONNECTIONS_PER_IP: '0',
      HOSTAPI_DNS_PORT: '0',
      HOSTAPI_WORKERS: '1',
      HOSTAPI_JOBS: '0',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const [, base] = await waitForLine(server, /^hostapi listening on (\S+)/)
    const origin = base!.replace(/\/api\/v2$/, '')
    const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false, maxSockets: connections })
    const samples: { at: number; ms: number; status: number }[] = []
    let stop = false
    const one = () =>
      new Promise<number>((resolve) => {
        const req = https.request(`${origin}/api/v2/whoami`, { agent, headers: { 'api-key': DEMO_KEY } }, (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode ?? 0))
        })
        req.on('error', () => resolve(0))
        req.end()
      })
    const worker = async () => {
      while (!stop) {
        const t0 = performance.now()
        const status = await one()
        samples.push({ at: t0, ms: performance.now() - t0, status })
      }
    }
    const workers = Array.from({ length: connections }, worker)
    const phases: { name: string; start: number; end: number; readyz: string }[] = []
    const phase = async (name: string, action: () => Promise<void> | void) => {
      const start = performance.now()
      await action()
      await new Promise((r) => setTimeout(r, phaseSeconds * 1000))
      const ready = await call(`${origin}/readyz`, 'GET', {})
      phases.push({ name, start, end: performance.now(), readyz: ready.text })
    }
    await new Promise((r) => setTimeout(r, 3000)) // warm-up
    await phase('redis up', () => undefined)
    await phase('redis killed', async () => {
      redis.kill('SIGKILL')
      await new Promise((r) => redis.once('exit', r))
    })
    await phase('redis started again', async () => {
      redis = await startRedis(redisPort)
    })
    await phase('redis hung (SIGSTOP)', () => void redis.kill('SIGSTOP'))
    await phase('redis resumed (SIGCONT)', () => void redis.kill('SIGCONT'))
    stop = true
    await Promise.all(workers)

    const rows = phases.map((p) => {
      const all = samples.filter((s) => s.at >= p.start && s.at < p.end)
      const first = all.filter((s) => s.at < p.start + 1000)
      const lat = all.map((s) => s.ms)
      const lat1 = first.map((s) => s.ms)
      return {
        phase: p.name,
        requests: all.length,
        non200: all.filter((s) => s.status !== 200).length,
        p50: ms(pct(lat, 0.5)),
        p99: ms(pct(lat, 0.99)),
        max: ms(Math.max(...lat)),
        'p99 1st s': ms(pct(lat1, 0.99)),
        'max 1st s': ms(Math.max(...lat1)),
        readyz: JSON.parse(p.readyz).degraded ? 'degraded' : 'ok',
      }
    })
    process.stdout.write(`connections ${connections}, ${phaseSeconds} s a phase, latencies in ms\n`)
    console.table(rows)
    if (process.env.BENCH_DETAIL === '1') {
      // Requests and p50 second by second, to tell a transition from the machine's noise.
      for (const p of phases) {
        const secs: string[] = []
        for (let t = p.start; t < p.end; t += 1000) {
          const lat = samples.filter((s) => s.at >= t && s.at < Math.min(t + 1000, p.end)).map((s) => s.ms)
          secs.push(`${lat.length}/${ms(pct(lat, 0.5))}`)
        }
        process.stdout.write(`${p.name}: ${secs.join('  ')}\n`)
      }
    }
  } finally {
    server.kill('SIGTERM')
    redis.kill('SIGCONT')
    redis.kill('SIGKILL')
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
