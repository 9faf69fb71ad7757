import path from 'node:path'
import { parseSecretKey } from '../lib/secret-box.js'
import { EnvReader, type Env } from './env-reader.js'
import {
  dnsConfig,
  dnsDriverConfig,
  dnsTransferConfig,
  type DnsDriverConfig,
  type DnsServerConfig,
  type DnsTransferConfig,
} from './dns.js'
import { mailDriverConfig, type MailDriverConfig } from './mail.js'
import { caDriverConfig, type CaDriverConfig } from './ca.js'
import { connectionConfig, requestTimeoutDefault, type ConnectionsConfig } from './connections.js'
import { hypervisorConfig, type HypervisorConfig } from './hypervisor.js'
import { postgresConfig, type PostgresConfig } from './database.js'
import { unknownSettings } from './known-settings.js'
import { adminConfig, type AdminConfig } from './admin.js'
import { workersConfig, type WorkersConfig } from './workers.js'

/** The validated, frozen configuration of one hostapi process. Only this module reads the environment. */
export interface Config {
  host: string
  port: number
  /** Processes serving on these ports (HOSTAPI_WORKERS, `--workers`): see config/workers.ts. */
  workers: WorkersConfig
  httpPort: number | null
  dataDir: string
  tls: { certFile: string | null; keyFile: string | null; names: string[] }
  trustedProxies: string[]
  /**
   * Every listener's connections (HTTPS, admin, plain HTTP): the request head must arrive within `headersTimeoutMs`
   * and the whole request within `requestTimeoutMs` of its start (then 408 in the envelope and the connection is
   * closed); a kept-alive connection waits `idleTimeoutMs` for its next request; a TLS connection must finish its
   * handshake within `tlsHandshakeTimeoutMs` of connecting. At most `maxPerAddress` connections are open per client
   * address (an IPv6 /64 counts as one), trusted proxies excepted; 0 = no cap.
   */
  connections: ConnectionsConfig
  database: { dialect: 'sqlite'; file: string } | PostgresConfig
  redisUrl: string | null
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  redisPrefix: string
  demo: { enabled: boolean; key: string | null }
  /** The built-in authoritative DNS server: UDP and TCP on `host`:`port`; port null = off. */
  dns: DnsServerConfig
  /** Which DNS driver serves the zones: the built-in server (`dns`) or a PowerDNS pushed through its HTTP API. */
  dnsDriver: DnsDriverConfig
  /** The built-in DNS server as a hidden primary: zone transfers to and NOTIFY of its secondaries. */
  dnsTransfer: DnsTransferConfig
  logLevel: string
  /** Started by npm (npx, npm start: npm_command is set): `serve` stops when the process npm started it under ends. */
  startedByNpm: boolean
  /** A log line per answered request (method, path, status, ms, operation id): on unless HOSTAPI_REQUEST_LOG=0. */
  requestLog: boolean
  /** What the start should say about the environment without stopping: `HOSTAPI_*` variables hostapi does not read. */
  warnings: string[]
  bodyLimit: number
  /** The deepest nesting of arrays and objects a JSON body may have: deeper is refused 400 before it is parsed. */
  jsonMaxDepth: number
  /** The most values a JSON body may hold: more is refused 413 before it is parsed (JSON.parse of many blocks). */
  jsonMaxValues: number
  rateLimit: { perKeyPerMinute: number; availabilityPerMinute: number }
  /**
   * Failed credentials (wrong, expired, revoked or not whitelisted API keys; wrong admin tokens) per client address:
   * after `limit` failures within `windowSeconds` every request needing a credential from that address is answered
   * 429 until the window ends. Shared through Redis when configured. `limit` 0 turns the throttle off.
   */
  authFailures: { limit: number; windowSeconds: number }
  /**
   * Redis guard: a command not answered within `timeoutMs` counts as failed; after repeated failures a circuit breaker
   * moves the shared counters to this instance's memory and tries Redis again every `retryMs`.
   */
  redisGuard: { timeoutMs: number; retryMs: number }
  /** An API key with an empty whitelist may be used from any address. */
  emptyWhitelistAllowsAll: boolean
  /**
   * How long (ms) an instance may reuse a key lookup. Changes made on this instance take effect at once;
   * changes made on another instance within this time. 0 looks every key up on every request.
   */
  authCacheMs: number
  /**
   * Memory (MiB) for answers of cacheable reads, reused while the data is unchanged (SQLite only;
   * see the response-cache plugin). 0 turns the cache off.
   */
  responseCacheMb: number
  /**
   * How old (ms) the claim of an `Idempotency-Key` whose request never answered (its instance died) must be before
   * a retry with that key is handled as a new request. Longer than any request may run (the request timeout).
   */
  idempotencyLockMs: number
  /**
   * The job runner: whether this instance runs jobs, how often it looks for due ones, how many it runs at once, and
   * the lease of a running job (renewed while it runs; one whose lease ran out is taken as abandoned by a dead process).
   */
  jobs: { enabled: boolean; pollMs: number; concurrency: number; leaseMs: number }
  /**
   * How long the daily prune keeps rows, in days: the audit log (HOSTAPI_AUDIT_RETENTION_DAYS), finished and
   * failed jobs (HOSTAPI_JOB_RETENTION_DAYS) and the mail outbox (HOSTAPI_MAIL_RETENTION_DAYS); 90 each by default.
   */
  retention: { auditDays: number; jobDays: number; mailDays: number }
  /** The provider's own nameservers: the built-in nameserver profile `default-mijnhost`. */
  defaultNameservers: string[]
  /** The built-in registry: names registered elsewhere (transferable with `authCode` when one is set). */
  registry: { taken: { name: string; authCode: string | null }[] }
  /**
   * Domain names: customers hold registrable names only (one label below a public suffix of the Public Suffix
   * List's ICANN section); `privateSuffixes` are the operator's own suffixes below which names are registrable too.
   */
  domainNames: { privateSuffixes: string[] }
  /**
   * DNS zone imports and record replaces: the largest zone text (bytes) and record count per zone; inputs over
   * the inline thresholds are parsed in a pool of `workers` threads with at most `queue` waiting (then 503) and at
   * most `perAccount` running or waiting for one account (then 429).
   */
  zones: {
    maxBytes: number
    maxRecords: number
    inlineBytes: number
    inlineRecords: number
    workers: number
    queue: number
    perAccount: number
  }
  /**
   * The hypervisor behind the VPS area: the built-in simulator (runs actions `simSpeed` times faster than real ones)
   * or LXD (`lxd`: its settings, see config/hypervisor.ts).
   */
  hypervisor: HypervisorConfig
  /** Invoicing: VAT rate (percent), payment term, and the seller printed on invoices. */
  billing: {
    vatPercent: number
    dueDays: number
    currency: string
    seller: { name: string; address: string[]; vatNumber: string; iban: string }
  }
  /** Mail: the sender address, and where new support tickets are announced. */
  mail: { from: string; supportAddress: string }
  /** Which mail driver sends the mail: the built-in outbox (`builtin`) or an SMTP relay (`smtp`). */
  mailDriver: MailDriverConfig
  /** Which CA signs the certificates customers order: the built-in test CA (`builtin`) or an ACME server (`acme`). */
  caDriver: CaDriverConfig
  /** The built-in payments driver: payment links are `<paymentUrl>/<reference>`. */
  payments: { baseUrl: string }
  /**
   * The admin API (`/admin/v1`): on the main listener, or on its own listener at `host`:`port` when `port` is set
   * (then only there, with `/metrics`). `host` defaults to 127.0.0.1 whatever HOSTAPI_HOST is: the admin API and the
   * metrics stay off the network the customer API is on unless the operator binds them elsewhere.
   * `token`: a fixed admin token (HOSTAPI_ADMIN_TOKEN) made valid at start, for sandboxes and CI.
   */
  admin: AdminConfig
  /**
   * Sandbox mode: a controllable clock, reset to the seed, fault injection and a request journal.
   * `seedFile` (JSON or YAML) describes the data loaded on an empty database and on every reset.
   * `crashJob`: a job kind whose every attempt ends the process with SIGKILL (to try the quarantine of such jobs).
   * `crashAt`: named crash points (src/ops/crash-points.ts) where the process kills itself, for durability tests.
   */
  sandbox: {
    enabled: boolean
    seedFile: string | null
    journalSize: number
    crashJob: string | null
    crashAt: string[]
  }
  /**
   * The key that encrypts secrets at rest (the built-in CA's private keys): `key` (HOSTAPI_SECRET_KEY, 32 bytes
   * as hex or base64) or `keyFile` (HOSTAPI_SECRET_KEY_FILE); neither: `<dataDir>/secret.key`, generated on first
   * start. During a rotation, `previous` (HOSTAPI_SECRET_KEY_PREVIOUS, comma separated) and `next`
   * (HOSTAPI_SECRET_KEY_NEXT) still open values sealed with them; new values are sealed with `key` only.
   */
  secrets: { key: string | null; keyFile: string | null; previous: string[]; next: string | null }
  /**
   * Webhooks: endpoints per account; plain `http://` URLs and private addresses (both allowed in sandbox mode
   * unless set); the timeout of one attempt; attempts in flight per endpoint; the delivery jobs' own lane of the
   * job runner (`concurrency`) and the share of it one account may hold; extra CAs trusted for receivers.
   */
  webhooks: {
    maxEndpoints: number
    allowHttp: boolean
    allowPrivate: boolean
    timeoutMs: number
    endpointConcurrency: number
    concurrency: number
    accountConcurrency: number
    caFile: string | null
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`)
  }
}

/** What stops a start that the configuration can fix (a port in use): its message is the one line to print. */
export class StartError extends Error {}

/** The environment under the command line's settings: an env file's variables below it, flags' over it. */
export const environment = (file: Env, flags: Env): Env => ({ ...file, ...process.env, ...flags })

/** Reads every HOSTAPI_* variable (and DATABASE_URL, REDIS_URL); lists every problem at once. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const r = new EnvReader(env)
  // In the order of Config, so problems are listed in that order too.
  const listeners = listenerConfig(r)
  const storage = storageConfig(r, listeners.dataDir)
  const demo = demoConfig(r)
  const config: Config = {
    ...listeners,
    ...storage,
    workers: workersConfig(r, demo.enabled, storage.database),
    demo,
    logLevel: env.HOSTAPI_LOG_LEVEL || 'info',
    startedByNpm: Boolean(env.npm_command),
    warnings: unknownSettings(env),
    requestLog: r.bool('HOSTAPI_REQUEST_LOG', true),
    dns: dnsConfig(r),
    dnsDriver: dnsDriverConfig(r),
    dnsTransfer: dnsTransferConfig(r),
    bodyLimit: r.int('HOSTAPI_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    jsonMaxDepth: r.int('HOSTAPI_JSON_MAX_DEPTH', 64, 8, 1000),
    jsonMaxValues: r.int('HOSTAPI_JSON_MAX_VALUES', 100_000, 1000, 10_000_000),
    ...limitConfig(r),
    jobs: {
      enabled: r.bool('HOSTAPI_JOBS', true),
      pollMs: r.int('HOSTAPI_JOB_POLL_MS', 500, 10, 60_000),
      concurrency: r.int('HOSTAPI_JOB_CONCURRENCY', 4, 1, 64),
      leaseMs: r.int('HOSTAPI_JOB_LEASE_MS', 60_000, 1000, 3_600_000),
    },
    retention: {
      auditDays: r.int('HOSTAPI_AUDIT_RETENTION_DAYS', 90, 1, 36_500),
      jobDays: r.int('HOSTAPI_JOB_RETENTION_DAYS', 90, 1, 36_500),
      mailDays: r.int('HOSTAPI_MAIL_RETENTION_DAYS', 90, 1, 36_500),
    },
    ...domainConfig(r),
    zones: zoneConfig(r),
    ...providerConfig(r),
    mailDriver: mailDriverConfig(r),
    caDriver: caDriverConfig(r),
    ...operatorConfig(r, demo.enabled),
    webhooks: webhooksConfig(r, r.bool('HOSTAPI_SANDBOX', demo.enabled)),
    ...overrides,
  }
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    r.problem('HOSTAPI_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent')
  }
  if (r.problems.length) throw new ConfigError(r.problems)
  return Object.freeze(config)
}

type Listeners = 'host' | 'port' | 'httpPort' | 'dataDir' | 'tls' | 'trustedProxies' | 'connections'

/** Where the server listens and keeps its files: addresses, ports, data directory, TLS, trusted proxies. */
function listenerConfig(r: EnvReader): Pick<Config, Listeners> {
  const { env } = r
  const port = r.int('HOSTAPI_PORT', 8443, 0, 65535)
  const httpPort = r.int('HOSTAPI_HTTP_PORT', 0, 0, 65535)
  const certFile = env.HOSTAPI_TLS_CERT || null
  const keyFile = env.HOSTAPI_TLS_KEY || null
  if ((certFile === null) !== (keyFile === null)) r.problem('HOSTAPI_TLS_CERT and HOSTAPI_TLS_KEY must be set together')
  return {
    host: env.HOSTAPI_HOST || '127.0.0.1',
    port,
    httpPort: env.HOSTAPI_HTTP_PORT ? httpPort : null,
    dataDir: path.resolve(env.HOSTAPI_DATA_DIR || './data'),
    tls: { certFile, keyFile, names: r.list('HOSTAPI_TLS_NAMES') },
    trustedProxies: r.addresses('HOSTAPI_TRUSTED_PROXIES'),
    connections: connectionConfig(r),
  }
}

/** The database (SQLite in the data directory unless DATABASE_URL says otherwise) and the optional Redis. */
function storageConfig(r: EnvReader, dataDir: string): Pick<Config, 'database' | 'redisUrl' | 'redisPrefix'> {
  const { env } = r
  const dbUrl = env.DATABASE_URL || ''
  let database: Config['database']
  if (dbUrl.startsWith('postgres://') || dbUrl.startsWith('postgresql://')) {
    database = postgresConfig(r, dbUrl)
  } else if (dbUrl === '' || dbUrl.startsWith('sqlite:')) {
    const file = dbUrl.startsWith('sqlite:') ? dbUrl.slice('sqlite:'.length) : path.join(dataDir, 'hostapi.db')
    database = { dialect: 'sqlite', file: file === ':memory:' ? file : path.resolve(file) }
  } else {
    r.problem('DATABASE_URL must start with postgres://, postgresql:// or sqlite:')
    database = { dialect: 'sqlite', file: path.join(dataDir, 'hostapi.db') }
  }
  const redisUrl = env.REDIS_URL || null
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) r.problem('REDIS_URL must start with redis:// or rediss://')
  return { database, redisUrl, redisPrefix: env.HOSTAPI_REDIS_PREFIX || 'hostapi:' }
}

/** The demo account, on unless HOSTAPI_DEMO turns it off, with a fixed key when HOSTAPI_DEMO_KEY is set. */
function demoConfig(r: EnvReader): Config['demo'] {
  const key = r.env.HOSTAPI_DEMO_KEY || null
  if (key !== null && !/^[A-Za-z0-9_-]{16,128}$/.test(key)) {
    r.problem('HOSTAPI_DEMO_KEY must be 16 to 128 characters of A-Z, a-z, 0-9, _ and -')
  }
  return { enabled: r.bool('HOSTAPI_DEMO', true), key }
}

type Limits =
  | 'rateLimit'
  | 'authFailures'
  | 'redisGuard'
  | 'emptyWhitelistAllowsAll'
  | 'authCacheMs'
  | 'responseCacheMb'
  | 'idempotencyLockMs'

/** Rate limits, the failed-credential throttle, the Redis guard, key lookups and the response cache. */
function limitConfig(r: EnvReader): Pick<Config, Limits> {
  return {
    rateLimit: {
      perKeyPerMinute: r.int('HOSTAPI_RATE_LIMIT', 1200, 1, 1_000_000_000),
      availabilityPerMinute: r.int('HOSTAPI_AVAILABILITY_RATE_LIMIT', 60, 1, 1_000_000),
    },
    authFailures: {
      limit: r.int('HOSTAPI_AUTH_FAIL_LIMIT', 20, 0, 1_000_000),
      windowSeconds: r.int('HOSTAPI_AUTH_FAIL_WINDOW', 300, 1, 86_400),
    },
    redisGuard: {
      timeoutMs: r.int('HOSTAPI_REDIS_TIMEOUT_MS', 50, 5, 10_000),
      retryMs: r.int('HOSTAPI_REDIS_RETRY_MS', 2000, 100, 600_000),
    },
    emptyWhitelistAllowsAll: r.bool('HOSTAPI_EMPTY_WHITELIST_ALLOWS_ALL', true),
    authCacheMs: r.int('HOSTAPI_AUTH_CACHE_MS', 1000, 0, 60_000),
    responseCacheMb: r.int('HOSTAPI_RESPONSE_CACHE_MB', 64, 0, 65_536),
    // By default as long as a request may take (HOSTAPI_REQUEST_TIMEOUT_MS): no live request loses its claim.
    idempotencyLockMs: r.int('HOSTAPI_IDEMPOTENCY_LOCK_MS', requestTimeoutDefault(r), 1000, 3_600_000),
  }
}

const DEFAULT_NAMESERVERS = 'ns1.hostapi.test,ns2.hostapi.test,ns3.hostapi.test'
const TAKEN_NAMES = 'example.com,example.net,example.org=DEMO-TRANSFER-CODE'

/** Domain names: the provider's nameservers, names taken at the built-in registry, the operator's own suffixes. */
function domainConfig(r: EnvReader): Pick<Config, 'defaultNameservers' | 'registry' | 'domainNames'> {
  return {
    defaultNameservers: r.hostnames('HOSTAPI_DEFAULT_NAMESERVERS', DEFAULT_NAMESERVERS),
    registry: { taken: r.takenNames('HOSTAPI_REGISTRY_TAKEN', TAKEN_NAMES) },
    domainNames: { privateSuffixes: r.suffixes('HOSTAPI_PRIVATE_SUFFIXES') },
  }
}

/** Zone size limits and the zone worker pool. */
function zoneConfig(r: EnvReader): Config['zones'] {
  return {
    maxBytes: r.int('HOSTAPI_ZONE_MAX_BYTES', 10 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    maxRecords: r.int('HOSTAPI_ZONE_MAX_RECORDS', 50_000, 1, 10_000_000),
    inlineBytes: r.int('HOSTAPI_ZONE_INLINE_BYTES', 64 * 1024, 0, 256 * 1024 * 1024),
    inlineRecords: r.int('HOSTAPI_ZONE_INLINE_RECORDS', 200, 0, 10_000_000),
    workers: r.int('HOSTAPI_ZONE_WORKERS', 1, 1, 64),
    queue: r.int('HOSTAPI_ZONE_QUEUE', 4, 0, 10_000),
    perAccount: r.int('HOSTAPI_ZONE_PER_ACCOUNT', 1, 1, 10_000),
  }
}

/** The providers behind the areas: the hypervisor, invoicing, mail and payments. */
function providerConfig(r: EnvReader): Pick<Config, 'hypervisor' | 'billing' | 'mail' | 'payments'> {
  const { env } = r
  return {
    hypervisor: hypervisorConfig(r),
    billing: {
      vatPercent: r.percent('HOSTAPI_VAT_PERCENT', 21),
      dueDays: r.int('HOSTAPI_INVOICE_DUE_DAYS', 14, 0, 365),
      currency: 'EUR',
      seller: {
        name: env.HOSTAPI_SELLER_NAME || 'hostapi',
        address: (env.HOSTAPI_SELLER_ADDRESS ?? '')
          .split(';')
          .map((s) => s.trim())
          .filter(Boolean),
        vatNumber: env.HOSTAPI_SELLER_VAT_NUMBER || '',
        iban: env.HOSTAPI_SELLER_IBAN || '',
      },
    },
    mail: {
      from: r.email('HOSTAPI_MAIL_FROM', 'hostapi@localhost.localdomain'),
      supportAddress: r.email('HOSTAPI_SUPPORT_EMAIL', 'support@localhost.localdomain'),
    },
    payments: { baseUrl: r.httpUrl('HOSTAPI_PAYMENT_URL', 'https://localhost:8443/pay') },
  }
}

/** The operator's controls: the admin API, sandbox mode and the secret key. */
function operatorConfig(r: EnvReader, demoEnabled: boolean): Pick<Config, 'admin' | 'sandbox' | 'secrets'> {
  const { env } = r
  const sandbox = r.bool('HOSTAPI_SANDBOX', demoEnabled)
  const crashJob = env.HOSTAPI_SANDBOX_CRASH_JOB || null
  if (crashJob !== null && !sandbox)
    r.problem('HOSTAPI_SANDBOX_CRASH_JOB is honoured in sandbox mode only (HOSTAPI_SANDBOX)')
  const crashAt = (env.HOSTAPI_CRASH_AT ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (crashAt.length > 0 && !sandbox) r.problem('HOSTAPI_CRASH_AT needs sandbox mode (HOSTAPI_SANDBOX=1)')
  return {
    admin: adminConfig(r),
    sandbox: {
      // On with the demo unless set; HOSTAPI_DEMO=0 alone turns it off.
      enabled: sandbox,
      seedFile: env.HOSTAPI_SEED_FILE ? path.resolve(env.HOSTAPI_SEED_FILE) : null,
      journalSize: r.int('HOSTAPI_JOURNAL_SIZE', 200, 1, 100_000),
      crashJob,
      crashAt,
    },
    secrets: secretKeyConfig(r),
  }
}

/** Webhooks: limits, what receivers may be, the attempt timeout. Sandbox mode allows http and private addresses. */
function webhooksConfig(r: EnvReader, sandbox: boolean): Config['webhooks'] {
  const { env } = r
  const concurrency = r.int('HOSTAPI_WEBHOOKS_CONCURRENCY', 8, 1, 256)
  const accountConcurrency = r.int('HOSTAPI_WEBHOOKS_ACCOUNT_CONCURRENCY', Math.ceil(concurrency / 2), 1, 256)
  if (accountConcurrency > concurrency)
    r.problem('HOSTAPI_WEBHOOKS_ACCOUNT_CONCURRENCY must not exceed HOSTAPI_WEBHOOKS_CONCURRENCY')
  return {
    maxEndpoints: r.int('HOSTAPI_WEBHOOKS_MAX_ENDPOINTS', 20, 0, 1000),
    allowHttp: r.bool('HOSTAPI_WEBHOOKS_ALLOW_HTTP', sandbox),
    allowPrivate: r.bool('HOSTAPI_WEBHOOKS_ALLOW_PRIVATE', sandbox),
    timeoutMs: r.int('HOSTAPI_WEBHOOKS_TIMEOUT_MS', 10_000, 100, 60_000),
    endpointConcurrency: r.int('HOSTAPI_WEBHOOKS_ENDPOINT_CONCURRENCY', 2, 1, 16),
    concurrency,
    accountConcurrency,
    caFile: env.HOSTAPI_WEBHOOKS_CA_FILE ? path.resolve(env.HOSTAPI_WEBHOOKS_CA_FILE) : null,
  }
}

/** The secret key: given, in a file, or (neither) generated in the data directory; previous and next keys during a rotation. */
function secretKeyConfig(r: EnvReader): Config['secrets'] {
  const { env } = r
  const key = env.HOSTAPI_SECRET_KEY || null
  const keyFile = env.HOSTAPI_SECRET_KEY_FILE ? path.resolve(env.HOSTAPI_SECRET_KEY_FILE) : null
  const previous = r.list('HOSTAPI_SECRET_KEY_PREVIOUS')
  if (key !== null && keyFile !== null) r.problem('Set HOSTAPI_SECRET_KEY or HOSTAPI_SECRET_KEY_FILE, not both')
  if (key !== null && !parseSecretKey(key)) {
    r.problem('HOSTAPI_SECRET_KEY must be 32 bytes as 64 hex digits or as base64')
  }
  if (previous.some((k) => !parseSecretKey(k))) {
    r.problem('HOSTAPI_SECRET_KEY_PREVIOUS must list keys of 32 bytes as 64 hex digits or as base64')
  }
  const next = env.HOSTAPI_SECRET_KEY_NEXT || null
  if (next !== null && !parseSecretKey(next)) {
    r.problem('HOSTAPI_SECRET_KEY_NEXT must be 32 bytes as 64 hex digits or as base64')
  }
  return { key, keyFile, previous, next }
}
