// `hostapi serve --workers N`: a primary process readies what must happen once, forks N workers that serve the same
// ports (Node's cluster shares the listening sockets), keeps the counters they share, replaces a worker that dies
// and stops them all on SIGTERM or SIGINT. docs/workers.md says which work runs in which process.
import cluster, { type Worker } from 'node:cluster'
import pino, { type Logger } from 'pino'
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client'

type Metric = MetricObjectWithValues<MetricValue<string>>
import type { Metrics } from './ops/metrics.js'
import type { Config } from './config/config.js'
import { systemClock } from './clock.js'
import { MemoryWindowCounter, type WindowCounter } from './db/window-counter.js'
import { answerCounts, SharedWindowCounter } from './db/shared-window-counter.js'
import { prepareOnce, type WorkerRole } from './server.js'
import { announce, type Announcement, type Say } from './cli/start-lines.js'

/** Consecutive workers that end before serving, after which the primary gives up and exits with status 1. */
export const MAX_START_FAILURES = 5
/** The wait before a dead worker is replaced: doubled after each worker that ended before serving, up to the cap. */
const RESPAWN_MS = 100
const RESPAWN_CAP_MS = 10_000

const HELLO = 'hostapi:hello'
const ROLE = 'hostapi:role'
const READY = 'hostapi:ready'
/** A scrape: a worker asks for every worker's metrics (GATHER), the primary asks each (COLLECT, answered OWN). */
export const GATHER = 'hostapi:metrics-gather'
const COLLECT = 'hostapi:metrics-collect'
const OWN = 'hostapi:metrics-own'
const GATHERED = 'hostapi:metrics-gathered'
/** How long a scrape waits for the workers' metrics: one that has not answered by then is left out. */
const GATHER_MS = 2000

const typed = (m: unknown, type: string): boolean =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type

/** In a worker: asks the primary for this worker's role (its index, whether it runs the background work). */
export function askRole(): Promise<WorkerRole> {
  return new Promise((resolve) => {
    const listener = (m: unknown) => {
      if (!typed(m, ROLE)) return
      process.off('message', listener)
      resolve((m as { role: WorkerRole }).role)
    }
    process.on('message', listener)
    send({ type: HELLO })
  })
}

/** In a worker: tells the primary that this worker serves, with what its start lines would say. */
export function tellReady(facts: Announcement): void {
  send({ type: READY, facts })
}

/** In a worker: the counters shared by all the workers, kept by the primary. */
export function workerCounter(): WindowCounter {
  return new SharedWindowCounter({ send, onMessage: (listener) => void process.on('message', listener) })
}

/**
 * In a worker: the metrics a scrape answers are the whole server's, every worker's added up (prom-client's
 * AggregatorRegistry: counters and histograms summed, the database's gauges taken once).
 */
export function shareMetrics(metrics: Metrics): void {
  let nextId = 1
  const waiting = new Map<number, (all: Metric[][]) => void>()
  process.on('message', (m: unknown) => {
    if (typed(m, COLLECT)) {
      const { id } = m as { id: string }
      metrics.ownJson().then(
        (json) => send({ type: OWN, id, json }),
        () => send({ type: OWN, id, json: [] }),
      )
    } else if (typed(m, GATHERED)) {
      const { id, all } = m as { id: number; all: Metric[][] }
      waiting.get(id)?.(all)
      waiting.delete(id)
    }
  })
  metrics.gatherWith(async () => {
    const id = nextId++
    const all = await new Promise<Metric[][]>((resolve) => {
      waiting.set(id, resolve)
      send({ type: GATHER, id })
    })
    return AggregatorRegistry.aggregate(all).metrics()
  })
}

function send(message: unknown): void {
  // The channel is gone once the primary has ended: the worker then stops on 'disconnect'. A send that still fails
  // (the channel closed meanwhile) is dropped by its callback instead of raising an 'error' no one listens to.
  if (process.connected) process.send?.(message, undefined, undefined, dropped)
}

/**
 * In the primary: a message to a worker. A worker can die between its last message and the primary's answer; without
 * a callback, a send on its closed channel is an unhandled 'error' that ends the primary, and every worker with it.
 */
function tell(worker: Worker, message: unknown): void {
  if (worker.isConnected()) worker.send(message as object, undefined, dropped)
}

const dropped = () => undefined

/**
 * The primary: readies the database, the seed and the TLS material once, forks `config.workers.count` workers (the
 * first alone, so a start that fails says why once), says the start's lines once all serve, and keeps them running
 * until SIGTERM or SIGINT, which it passes to every worker (each drains as a single process does). Its exit status is
 * 0 when every worker ended so; 1 after MAX_START_FAILURES workers in a row ended before serving.
 */
export async function runPrimary(config: Config, say: Say, terminalLog: Logger | undefined, drainMs: number) {
  const log = terminalLog ?? pino({ level: config.logLevel })
  await prepareOnce(config, { log })
  const n = config.workers.count
  const counter = new MemoryWindowCounter(systemClock)
  const workers = new Map<number, Worker>()
  const gathers = new Map<string, { finish: () => void; add: (from: Worker, json: Metric[]) => void }>()
  const gather = (asker: Worker, id: number) => {
    const key = `${asker.id}:${id}`
    const pending = new Set(workers.values())
    const all: Metric[][] = []
    const finish = () => {
      clearTimeout(timer)
      gathers.delete(key)
      tell(asker, { type: GATHERED, id, all })
    }
    const timer = setTimeout(finish, GATHER_MS)
    gathers.set(key, {
      finish,
      add: (from, json) => {
        if (!pending.delete(from)) return
        all.push(json)
        if (pending.size === 0) finish()
      },
    })
    for (const w of pending) tell(w, { type: COLLECT, id: key })
  }
  let startFailures = 0
  let stopping = false
  let exitCode = 0
  // Until every worker of the start serves, a worker that ends stops the start (it said why on stderr).
  let serving = false
  let onReady: (facts: Announcement) => void = () => {}

  const fork = (index: number) => {
    const worker = cluster.fork()
    workers.set(index, worker)
    // From the moment it exists: an error of the worker's process or channel is said, never thrown at the primary.
    worker.on('error', (err: Error) => log.warn({ err: err.message, worker: index }, 'worker channel error'))
    let ready = false
    worker.on('message', (m: unknown) => {
      const answer = answerCounts(counter, m)
      if (answer) tell(worker, answer)
      else if (typed(m, GATHER)) gather(worker, (m as { id: number }).id)
      else if (typed(m, OWN)) {
        const { id, json } = m as { id: string; json: Metric[] }
        gathers.get(id)?.add(worker, json)
      } else if (typed(m, HELLO)) tell(worker, { type: ROLE, role: { index, background: index === 0 } })
      else if (typed(m, READY)) {
        ready = true
        startFailures = 0
        if (serving) log.info({ workerPid: worker.process.pid, worker: index }, 'worker serving')
        onReady((m as { facts: Announcement }).facts)
      }
    })
    worker.on('exit', (code, signal) => {
      if (workers.get(index) === worker) workers.delete(index)
      if (stopping) {
        if (code !== 0) exitCode = 1
        if (workers.size === 0) process.exit(exitCode)
        return
      }
      const workerPid = worker.process.pid
      if (!serving) {
        stopping = true
        for (const w of workers.values()) w.process.kill('SIGKILL')
        process.exit(code || 1)
      }
      if (!ready) startFailures++
      if (startFailures >= MAX_START_FAILURES) {
        log.fatal(
          { workerPid, code, signal, startFailures },
          `${startFailures} workers in a row ended before serving: stopping`,
        )
        return stop(1)
      }
      const delay = Math.min(RESPAWN_MS * 2 ** startFailures, RESPAWN_CAP_MS)
      log.error({ workerPid, code, signal, worker: index, respawnMs: delay }, 'worker ended: starting another')
      setTimeout(() => !stopping && fork(index), delay)
    })
    return worker
  }

  const stop = (status: number) => {
    if (stopping) return
    stopping = true
    exitCode = status
    if (workers.size === 0) process.exit(exitCode)
    for (const w of workers.values()) w.process.kill('SIGTERM')
    // A worker still running after its own drain time (and a little) is ended.
    setTimeout(() => {
      log.error({ drainMs }, 'workers still running after the drain time: killing them')
      for (const w of workers.values()) w.process.kill('SIGKILL')
      process.exit(1)
    }, drainMs + 5000).unref()
  }
  const stopOn = (signal: NodeJS.Signals) => () => {
    log.info({ signal, workers: workers.size }, 'shutting down: stopping the workers')
    stop(0)
  }
  process.on('SIGTERM', stopOn('SIGTERM'))
  process.on('SIGINT', stopOn('SIGINT'))
  process.on('SIGHUP', () => {
    for (const w of workers.values()) w.process.kill('SIGHUP')
  })

  // The first worker alone: a start that fails (a port in use) says why once, in that worker's words.
  const facts = await new Promise<Announcement>((resolve) => {
    onReady = resolve
    fork(0)
  })
  await new Promise<void>((resolve) => {
    let rest = n - 1
    onReady = () => --rest === 0 && resolve()
    for (let i = 1; i < n; i++) fork(i)
  })
  serving = true
  onReady = () => {}
  announce(facts, say)
  const pids = [...workers.values()].map((w) => w.process.pid)
  say(`${n} workers serving (pids ${pids.join(', ')})`, { workers: n, pids })
}
