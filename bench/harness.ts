// What the benchmarks share: where the compiled files are, the load settings, and the calls to a running server.
import { execFile, execFileSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import https from 'node:https'
import http from 'node:http'
import readline from 'node:readline'
import { lineText } from '../src/lib/log-line.js'

// Runs from bench/ (tsx) or dist/bench/ (compiled): the root is where package.json is.
const here = path.dirname(new URL(import.meta.url).pathname)
export const root = fs.existsSync(path.join(here, '..', 'package.json'))
  ? path.resolve(here, '..')
  : path.resolve(here, '..', '..')
/** A file of the compiled tree, by its path relative to the root. */
export const dist = (p: string) => path.join(root, 'dist', p)
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
export const durationSeconds = Number(process.env.BENCH_DURATION ?? 10)
export const warmupSeconds = Number(process.env.BENCH_WARMUP ?? 3)

export interface Figures {
  requests: number
  rps: number
  p50: number
  p99: number
  errors: number
}

/** The first line of the child's stdout matching `pattern`. */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}`)), timeoutMs)
    const rl = readline.createInterface({ input: child.stdout! })
    rl.on('line', (line) => {
      const m = lineText(line).match(pattern)
      if (m) {
        clearTimeout(timer)
        rl.close()
        resolve(m)
      }
    })
    child.once('exit', (code) => reject(new Error(`process exited with ${code} before ${pattern}`)))
  })
}

/** One request; the server's certificate is not checked. */
export function call(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const lib = url.startsWith('https:') ? https : http
  return new Promise((resolve, reject) => {
    const req = lib.request(
      url,
      {
        method,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        rejectUnauthorized: false,
      },
      (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Load with autocannon in a process of its own (dist/bench/load.js): a warm-up, then the measured window. Several
 * URLs (instances of one server) share the connections round-robin: connection i goes to URL i mod n.
 */
export function load(
  url: string | string[],
  method: string,
  headers: Record<string, string>,
  body?: string,
  windows?: { warmupSeconds: number; durationSeconds: number },
): Figures {
  const out = execFileSync(process.execPath, [dist('bench/load.js'), loadJob(url, method, headers, body, windows)], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  return JSON.parse(out.trim().split('\n').pop()!)
}

/** As `load`, without blocking this process (which goes on sending requests of its own meanwhile). */
export function loadInBackground(
  url: string | string[],
  method: string,
  headers: Record<string, string>,
  opts: { warmupSeconds: number; durationSeconds: number },
): Promise<Figures> {
  const job = loadJob(url, method, headers, undefined, opts)
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [dist('bench/load.js'), job], { encoding: 'utf8', maxBuffer: 1 << 20 }, (err, out) =>
      err ? reject(err) : resolve(JSON.parse(out.trim().split('\n').pop()!)),
    ),
  )
}

function loadJob(
  url: string | string[],
  method: string,
  headers: Record<string, string>,
  body?: string,
  windows = { warmupSeconds, durationSeconds },
): string {
  return JSON.stringify({
    url,
    method,
    headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
    body,
    connections,
    ...windows,
  })
}

/** What a running hostapi has counted so far, read from its metrics: requests answered and database round trips. */
export interface ServerCounts {
  requests: number
  roundTrips: number
}

/** Reads `hostapi_http_requests_total` (all series) and `hostapi_db_round_trips_total` from the admin metrics. */
export async function serverCounts(origin: string, adminToken: string): Promise<ServerCounts> {
  const r = await call(`${origin}/admin/v1/metrics`, 'GET', { authorization: `Bearer ${adminToken}` })
  if (r.status !== 200) throw new Error(`metrics: ${r.status} ${r.text.slice(0, 200)}`)
  let requests = 0
  let roundTrips = 0
  for (const line of r.text.split('\n')) {
    const m = /^(hostapi_http_requests_total|hostapi_db_round_trips_total)(?:\{[^}]*\})? (\S+)$/.exec(line)
    if (m?.[1] === 'hostapi_http_requests_total') requests += Number(m[2])
    else if (m) roundTrips += Number(m[2])
  }
  return { requests, roundTrips }
}

/** A TCP port free on loopback at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0))
    })
  })
}
