// `npm run bench:isolation`: tenant isolation under large zone imports. Account B reads its DNS records
// (GET /domains/{d}/dns, one request at a time) alone, then while account A runs 10 MB zone imports (dry run
// `?test=1` and real, alternating) back to back. Target: B's p99 under load < idle p99 + 50 ms.
// BENCH_ISOLATION_WRITERS (default 1) sets how many of A's imports run at once: with 2, the second is refused
// 429 while the first runs and, sent again at once whatever Retry-After says, floods the server with 10 MB bodies.
// The server runs from the sources (tsx) on SQLite in a temporary directory; BENCH_ISOLATION_SECONDS sets each window.
// The figures go to bench/isolation-results.json as well.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../src/config/config.js'
import { createContext } from '../src/context.js'
import { migrate } from '../src/db/migrate.js'
import { seedDemoIfEmpty } from '../src/seed/demo.js'
import { root, waitForLine } from './harness.js'

const KEY_A = 'isolationIsolationIsolation0001'
const seconds = Number(process.env.BENCH_ISOLATION_SECONDS ?? 15)
const writers = Number(process.env.BENCH_ISOLATION_WRITERS ?? 1)
const progress = (text: string) => process.stderr.write(`bench:isolation: ${text}\n`)
const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false })

function send(url: string, method: string, key: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        agent,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** A zone text of about `bytes` bytes: TXT records of 400 characters. */
function bigZone(bytes: number): string {
  const rows = ['$TTL 3600']
  let size = 0
  for (let i = 0; size < bytes - 500; i++) {
    const row = `t${i} 300 IN TXT "${String(i).padStart(400, 'x')}"`
    rows.push(row)
    size += row.length + 1
  }
  return `${rows.join('\n')}\n`
}

const p = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

async function reader(
  url: string,
  key: string,
  untilMs: number,
): Promise<{ n: number; p50: number; p99: number; max: number; errors: number }> {
  const times: number[] = []
  let errors = 0
  while (Date.now() < untilMs) {
    const t0 = performance.now()
    const r = await send(url, 'GET', key)
    times.push(performance.now() - t0)
    if (r.status !== 200) errors++
  }
  times.sort((a, b) => a - b)
  return { n: times.length, p50: p(times, 0.5), p99: p(times, 0.99), max: times[times.length - 1]!, errors }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-isolation-'))
const env = {
  ...process.env,
  HOSTAPI_DATA_DIR: dataDir,
  HOSTAPI_PORT: '0',
  HOSTAPI_DNS_PORT: '0',
  HOSTAPI_WORKERS: '1',
  HOSTAPI_DEMO_KEY: KEY_A,
  HOSTAPI_LOG_LEVEL: 'warn',
  HOSTAPI_JOBS: '0',
  HOSTAPI_RATE_LIMIT: '1000000000',
  // Every load connection comes from one address: BENCH_CONNECTIONS may exceed the per-address cap.
  HOSTAPI_MAX_CONNECTIONS_PER_IP: '0',
  DATABASE_URL: `sqlite:${path.join(dataDir, 'hostapi.db')}`,
}
try {
  const ctx = createContext(loadConfig({ ...env, HOSTAPI_LOG_LEVEL: 'silent' }))
  await migrate(ctx.db, ctx.dbSchema)
  await seedDemoIfEmpty(ctx)
  const b = await ctx.services.iam.createAccount({
    name: 'Tenant B',
    email: 'b@example.com',
    firstname: 'B',
    lastname: 'Tenant',
  })
  const keyB = (await ctx.services.iam.createKey(b.accountId, b.userId, { label: 'bench' })).key
  const domainB = 'tenant-b-isolation.nl'
  await ctx.services.domains.create(ctx.db, {
    accountId: b.accountId,
    name: domainB,
    renewalDate: '2030-01-01',
    nameserverProfile: null,
    nameservers: [],
    contacts: {},
  })
  await ctx.services.dns.replace(
    b.accountId,
    domainB,
    Array.from({ length: 20 }, (_, i) => ({ type: 'A', name: `h${i}`, value: `192.0.2.${i}` })),
  )
  await ctx.close()

  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/main.ts'), 'serve'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const [, base] = await waitForLine(child, /^hostapi listening on (\S+)/)
    const readUrl = `${base}/domains/${domainB}/dns`
    const zone = JSON.stringify({ zone: bigZone(10_000_000) })
    progress(`zone import body ${(zone.length / 1e6).toFixed(1)} MB; warm-up`)
    await reader(readUrl, keyB, Date.now() + 2000)
    const warm = await send(`${base}/domains/demo-shop.nl/dns/zone?test=1`, 'PUT', KEY_A, zone)
    if (warm.status !== 200) throw new Error(`the zone import failed: ${warm.text}`)

    progress(`idle reader, ${seconds} s`)
    const idle = await reader(readUrl, keyB, Date.now() + seconds * 1000)

    progress(`reader while account A imports 10 MB zones (${writers} at once), ${seconds} s`)
    let stop = false
    const imports = { ok: 0, other: new Map<number, number>(), ms: [] as number[] }
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const t0 = performance.now()
        const r = await send(`${base}/domains/demo-shop.nl/dns/zone${(i + w) % 2 ? '' : '?test=1'}`, 'PUT', KEY_A, zone)
        imports.ms.push(performance.now() - t0)
        if (r.status === 200) imports.ok++
        else imports.other.set(r.status, (imports.other.get(r.status) ?? 0) + 1)
      }
    }
    const running = Array.from({ length: writers }, (_, w) => writer(w))
    await new Promise((r) => setTimeout(r, 500))
    const loaded = await reader(readUrl, keyB, Date.now() + seconds * 1000)
    stop = true
    await Promise.all(running)

    const fmt = (x: number) => `${x.toFixed(1)} ms`
    const rows = [
      ['phase', 'requests', 'p50', 'p99', 'max', 'errors'],
      ['idle', String(idle.n), fmt(idle.p50), fmt(idle.p99), fmt(idle.max), String(idle.errors)],
      [
        'under 10 MB imports',
        String(loaded.n),
        fmt(loaded.p50),
        fmt(loaded.p99),
        fmt(loaded.max),
        String(loaded.errors),
      ],
    ]
    for (const r of rows) process.stdout.write(`${r.map((c, i) => (i ? c.padStart(12) : c.padEnd(22))).join('')}\n`)
    const avg = imports.ms.reduce((a, b) => a + b, 0) / Math.max(1, imports.ms.length)
    process.stdout.write(
      `imports: ${imports.ok} answered 200, others ${JSON.stringify(Object.fromEntries(imports.other))}, mean ${fmt(avg)}\n`,
    )
    const pass = loaded.p99 < idle.p99 + 50
    process.stdout.write(
      `target p99 under load < idle p99 + 50 ms: ${fmt(loaded.p99)} vs ${fmt(idle.p99 + 50)}: ${pass ? 'met' : 'NOT met'} (${os.availableParallelism()} cores, ${new Date().toISOString()})\n`,
    )
    const results = {
      date: new Date().toISOString(),
      cores: os.availableParallelism(),
      seconds,
      writers,
      zoneBodyBytes: zone.length,
      idle,
      loaded,
      imports: { ok: imports.ok, other: Object.fromEntries(imports.other), meanMs: avg },
      targetMet: pass,
    }
    fs.writeFileSync(path.join(root, 'bench/isolation-results.json'), `${JSON.stringify(results, null, 2)}\n`)
  } finally {
    child.kill('SIGTERM')
  }
} finally {
  agent.destroy()
  fs.rmSync(dataDir, { recursive: true, force: true })
}
