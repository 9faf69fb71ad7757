import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'

/** What the metrics read at scrape time. */
export interface MetricsSources {
  /** Jobs per kind and status. */
  jobCounts(): Promise<{ kind: string; status: string; n: number }[]>
  /** Per kind with due jobs (queued, run time reached): seconds since the oldest of them became due. */
  dueJobs?(): Promise<{ kind: string; oldestSeconds: number }[]>
  /** Outbox messages the mail relay refused (`failed`), still kept in the outbox. */
  failedMessages?(): Promise<number>
  /** With REDIS_URL only: Redis connected, and whether its circuit breaker is open (counters per instance then). */
  redis?(): { connected: boolean; breakerOpen: boolean }
  /** Statements sent to the database since it was opened (see Database.roundTrips). */
  dbRoundTrips(): number
  /** Jobs quarantined (failed, not run again, after their process died during two attempts) per kind. */
  quarantinedJobs?(): Promise<{ kind: string; n: number }[]>
  /** Pending webhook deliveries, endpoints retrying or disabled, and the oldest pending delivery's age. */
  webhookStats?(): Promise<{ pending: number; failing: number; disabled: number; oldestPendingSeconds: number }>
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

interface Series {
  labels: { operation: string; method: string; status: string }
  count: number
  sum: number
  /** Requests per bucket (not cumulative); slower ones than the last bucket are only in `count`. */
  buckets: number[]
}

/** `hostapi_http_requests_total` in prom-client's metric shape, read from the series at scrape time. */
function requestsMetric(series: Map<string, Series>) {
  const metric = {
    name: 'hostapi_http_requests_total',
    help: 'Requests answered, per operation, method and status',
    type: 'counter',
    aggregator: 'sum',
  }
  return {
    ...metric,
    get: async () => ({ ...metric, values: [...series.values()].map((s) => ({ labels: s.labels, value: s.count })) }),
  }
}

/** `hostapi_http_request_duration_seconds`, a histogram in prom-client's metric shape. */
function durationMetric(series: Map<string, Series>) {
  const name = 'hostapi_http_request_duration_seconds'
  const metric = {
    name,
    help: 'Time to answer a request, per operation, method and status',
    type: 'histogram',
    aggregator: 'sum',
  }
  const values = () =>
    [...series.values()].flatMap((s) => {
      let cumulative = 0
      return [
        ...BUCKETS.map((le, i) => {
          cumulative += s.buckets[i]
          return { metricName: `${name}_bucket`, labels: { le, ...s.labels }, value: cumulative }
        }),
        { metricName: `${name}_bucket`, labels: { le: '+Inf', ...s.labels }, value: s.count },
        { metricName: `${name}_sum`, labels: s.labels, value: s.sum },
        { metricName: `${name}_count`, labels: s.labels, value: s.count },
      ]
    })
  return { ...metric, get: async () => ({ ...metric, values: values() }) }
}

/** `hostapi_db_round_trips_total`, read from the database layer's own count at scrape time. */
/** A counter without labels in prom-client's metric shape, read from `read` at scrape time. */
function totalMetric(name: string, help: string, read: () => number) {
  const metric = { name, help, type: 'counter', aggregator: 'sum' }
  return { ...metric, get: async () => ({ ...metric, values: [{ labels: {}, value: read() }] }) }
}

/**
 * The process's Prometheus metrics: requests and latency per operation and status, database round trips, jobs,
 * rate-limit rejections, faults, webhooks, refused mail, Redis, the release. docs/metrics.md lists every series.
 */
export class Metrics {
  readonly registry = new Registry()
  /** Requests and their durations per operation, method and status, counted without prom-client's per-call label hashing. */
  private readonly series = new Map<string, Series>()
  private readonly rateLimited: Counter<'operation'>
  private readonly faults: Counter<'operation'>
  private sources: MetricsSources | null = null
  private answeredEarly = 0
  private whole: (() => Promise<string>) | null = null

  /** `version`: the release (package.json), shown by `hostapi_build_info`. */
  constructor(version = 'unknown') {
    const registers = [this.registry]
    this.registry.registerMetric(requestsMetric(this.series) as never)
    this.registry.registerMetric(durationMetric(this.series) as never)
    const roundTrips = totalMetric(
      'hostapi_db_round_trips_total',
      'Statements sent to the database: every query, BEGIN, COMMIT and ROLLBACK',
      () => this.sources?.dbRoundTrips() ?? 0,
    )
    this.registry.registerMetric(roundTrips as never)
    const early = totalMetric(
      'hostapi_http_answered_before_routing_total',
      'Cached reads answered before routing (also counted in hostapi_http_requests_total)',
      () => this.answeredEarly,
    )
    this.registry.registerMetric(early as never)
    this.rateLimited = new Counter({
      name: 'hostapi_rate_limit_rejections_total',
      help: 'Requests refused with 429, per operation',
      labelNames: ['operation'],
      registers,
    })
    this.faults = new Counter({
      name: 'hostapi_sandbox_faults_injected_total',
      help: 'Answers replaced by sandbox fault injection',
      labelNames: ['operation'],
      registers,
    })
    const self = this
    new Gauge({
      name: 'hostapi_jobs',
      help: 'Jobs in the queue per kind and status (queued = depth, failed = attempts used up)',
      labelNames: ['kind', 'status'],
      registers,
      // Read from the database: every worker of `serve --workers N` sees the same value.
      aggregator: 'first',
      async collect() {
        this.reset()
        for (const row of (await self.sources?.jobCounts()) ?? [])
          this.set({ kind: row.kind, status: row.status }, Number(row.n))
      },
    })
    new Gauge({
      name: 'hostapi_jobs_oldest_age_seconds',
      help:
        'Per kind, seconds since the oldest due job (queued, its run time reached) became due: how far behind the ' +
        'queue is (dns.push: zone pushes); jobs waiting for a later run (recurring, retry back-off) do not count',
      labelNames: ['kind', 'status'],
      registers,
      // Read from the database: every worker of `serve --workers N` sees the same value.
      aggregator: 'first',
      async collect() {
        this.reset()
        for (const row of (await self.sources?.dueJobs?.()) ?? [])
          this.set({ kind: row.kind, status: 'queued' }, row.oldestSeconds)
      },
    })
    new Gauge({
      name: 'hostapi_jobs_quarantined',
      help: 'Jobs quarantined per kind: their process died during two attempts, so they are failed and not run again',
      labelNames: ['kind'],
      registers,
      // Read from the database: every worker of `serve --workers N` sees the same value.
      aggregator: 'first',
      async collect() {
        this.reset()
        for (const row of (await self.sources?.quarantinedJobs?.()) ?? []) this.set({ kind: row.kind }, row.n)
      },
    })
    new Gauge({
      name: 'hostapi_webhook_deliveries_pending',
      help: 'Webhook deliveries not yet delivered or given up (waiting for an attempt or in one)',
      registers,
      // Read from the database: every worker of `serve --workers N` sees the same value.
      aggregator: 'first',
      async collect() {
        this.set((await self.sources?.webhookStats?.())?.pending ?? 0)
      },
    })
    new Gauge({
      name: 'hostapi_webhook_endpoints',
      help: 'Webhook endpoints per state: failing (a delivery is being retried) or disabled (after days of failures)',
      labelNames: ['state'],
      registers,
      // Read from the database: every worker of `serve --workers N` sees the same value.
      aggregator: 'first',
      async collect() {
        const stats = await self.sources?.webhookStats?.()
        this.set({ state: 'failing' }, stats?.failing ?? 0)
        this.set({ state: 'disabled' }, stats?.disabled ?? 0)
      },
    })
    new Gauge({
      name: 'hostapi_webhook_oldest_pending_age_seconds',
      help: 'Age of the oldest pending webhook delivery: how far behind delivery is',
      registers,
      // Read from the database: every worker of `serve --workers N` sees the same value.
      aggregator: 'first',
      async collect() {
        this.set((await self.sources?.webhookStats?.())?.oldestPendingSeconds ?? 0)
      },
    })
    new Gauge({
      name: 'hostapi_mail_outbox_failed',
      help: 'Outbox messages the mail relay refused (status failed) still kept in the outbox; a rise is new refused mail',
      registers,
      // Read from the database: every worker of `serve --workers N` sees the same value.
      aggregator: 'first',
      async collect() {
        this.set((await self.sources?.failedMessages?.()) ?? 0)
      },
    })
    new Gauge({
      name: 'hostapi_build_info',
      help: 'Always 1; the running release in the version label',
      labelNames: ['version'],
      registers,
      aggregator: 'first',
    }).set({ version }, 1)
    collectDefaultMetrics({ register: this.registry, prefix: 'hostapi_' })
  }

  /** Connects the scrape-time sources (the database is opened after the metrics exist); once per process. */
  setSources(sources: MetricsSources): void {
    this.sources = sources
    const redis = sources.redis
    if (!redis) return
    const registers = [this.registry]
    new Gauge({
      name: 'hostapi_redis_connected',
      help: 'With REDIS_URL: 1 while the Redis client is connected, 0 otherwise (counters then per instance)',
      registers,
      aggregator: 'min',
      collect() {
        this.set(redis().connected ? 1 : 0)
      },
    })
    new Gauge({
      name: 'hostapi_redis_breaker_open',
      help: 'With REDIS_URL: 1 while the Redis circuit breaker is open or half-open (counters per instance), 0 when closed',
      registers,
      aggregator: 'max',
      collect() {
        this.set(redis().breakerOpen ? 1 : 0)
      },
    })
  }

  /** Records one answered request. */
  observe(operation: string, method: string, status: number, seconds: number): void {
    const key = `${operation} ${method} ${status}`
    let one = this.series.get(key)
    if (!one) {
      one = {
        labels: { operation, method, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Array<number>(BUCKETS.length).fill(0),
      }
      this.series.set(key, one)
    }
    one.count++
    one.sum += seconds
    const i = BUCKETS.findIndex((b) => seconds <= b)
    if (i >= 0) one.buckets[i]++
    if (status === 429) this.rateLimited.inc({ operation })
  }

  /** Records a cached read answered before routing (src/http/early-answers.ts). */
  observeEarly(operation: string, seconds: number): void {
    this.answeredEarly++
    this.observe(operation, 'GET', 200, seconds)
  }

  faultInjected(operation: string): void {
    this.faults.inc({ operation })
  }

  /**
   * In a worker of `serve --workers N`: `whole` answers the scrape for the whole server (every worker's metrics,
   * summed where they add up), instead of this process's alone.
   */
  gatherWith(whole: () => Promise<string>): void {
    this.whole = whole
  }

  /** The text exposition format: the whole server's when gathered from every worker, else this process's. */
  text(): Promise<string> {
    return this.whole ? this.whole() : this.registry.metrics()
  }

  /** This process's metrics as prom-client's JSON, which AggregatorRegistry.aggregate adds up over workers. */
  ownJson() {
    return this.registry.getMetricsAsJSON()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
