import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** What the metrics read at scrape time. */
export interface MetricsSources {
  /** Jobs per kind and status. */
  jobCounts(): Promise<{ kind: string; status: string; n: number }[]>
}

const LABELS = ['operation', 'method', 'status'] as const

/** The process's Prometheus metrics: requests and latency per operation and status, jobs, rate-limit rejections, faults. */
export class Metrics {
  readonly registry = new Registry()
  private readonly requests: Counter<(typeof LABELS)[number]>
  private readonly duration: Histogram<(typeof LABELS)[number]>
  private readonly rateLimited: Counter<'operation'>
  private readonly faults: Counter<'operation'>
  private sources: MetricsSources | null = null

  constructor() {
    const registers = [this.registry]
    this.requests = new Counter({ name: 'hostapi_http_requests_total', help: 'Requests answered, per operation, method and status', labelNames: LABELS, registers })
    this.duration = new Histogram({
      name: 'hostapi_http_request_duration_seconds',
      help: 'Time to answer a request, per operation, method and status',
      labelNames: LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    })
    this.rateLimited = new Counter({ name: 'hostapi_rate_limit_rejections_total', help: 'Requests refused with 429, per operation', labelNames: ['operation'], registers })
    this.faults = new Counter({ name: 'hostapi_sandbox_faults_injected_total', help: 'Answers replaced by sandbox fault injection', labelNames: ['operation'], registers })
    const self = this
    new Gauge({
      name: 'hostapi_jobs',
      help: 'Jobs in the queue per kind and status (queued = depth, failed = attempts used up)',
      labelNames: ['kind', 'status'],
      registers,
      async collect() {
        this.reset()
        for (const row of (await self.sources?.jobCounts()) ?? []) this.set({ kind: row.kind, status: row.status }, Number(row.n))
      },
    })
    collectDefaultMetrics({ register: this.registry, prefix: 'hostapi_' })
  }

  /** Connects the scrape-time sources (the database is opened after the metrics exist). */
  setSources(sources: MetricsSources): void {
    this.sources = sources
  }

  /** Records one answered request. */
  observe(operation: string, method: string, status: number, seconds: number): void {
    const labels = { operation, method, status: String(status) }
    this.requests.inc(labels)
    this.duration.observe(labels, seconds)
    if (status === 429) this.rateLimited.inc({ operation })
  }

  faultInjected(operation: string): void {
    this.faults.inc({ operation })
  }

  /** The text exposition format. */
  text(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
