// Runs autocannon in its own process, so the load generator never shares a thread with a server.
// Input: a JSON job in argv[2]; output: one JSON line with the measured figures.
import autocannon from 'autocannon'

interface LoadJob {
  /** Several URLs share the connections round-robin (autocannon: connection i to URL i mod n). */
  url: string | string[]
  method: string
  headers: Record<string, string>
  body?: string
  connections: number
  warmupSeconds: number
  durationSeconds: number
}

const job = JSON.parse(process.argv[2]) as LoadJob
const base = {
  // autocannon takes an array of URLs too; its types name only a string.
  url: job.url as string,
  method: job.method as 'GET',
  headers: job.headers,
  body: job.body,
  connections: job.connections,
  pipelining: 1,
}
if (job.warmupSeconds > 0) await autocannon({ ...base, duration: job.warmupSeconds })
const r = await autocannon({ ...base, duration: job.durationSeconds })
process.stdout.write(
  `${JSON.stringify({
    requests: r.requests.total,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
  })}\n`,
)
