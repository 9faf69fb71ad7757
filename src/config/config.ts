import path from 'node:path'
import ipaddr from 'ipaddr.js'
import { parseSecretKey } from '../lib/secret-box.js'
import { parseTsigKey } from '../lib/dns/tsig.js'

/** The validated, frozen configuration of one hostapi process. Only this module reads the environment. */
export interface Config {
  host: string
  port: number
  httpPort: number | null
  dataDir: string
  tls: { certFile: string | null; keyFile: string | null; names: string[] }
  trustedProxies: string[]
  database: { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string; schema: string | null }
  redisUrl: string | null
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  redisPrefix: string
  demo: { enabled: boolean; key: string | null }
  /** The built-in authoritative DNS server: UDP and TCP on `host`:`port`; port null = off. */
  dns: { host: string; port: number | null }
  /** Which DNS driver serves the zones: the built-in server (`dns`) or a PowerDNS pushed through its HTTP API. */
  dnsDriver: DnsDriverConfig
  /** The built-in DNS server as a hidden primary: zone transfers to and NOTIFY of its secondaries. */
  dnsTransfer: DnsTransferConfig
  logLevel: string
  bodyLimit: number
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
  jobs: { enabled: boolean; pollMs: number; concurrency: number }
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
  zones: { maxBytes: number; maxRecords: number; inlineBytes: number; inlineRecords: number; workers: number; queue: number; perAccount: number }
  /** The hypervisor behind the VPS area: the built-in simulator runs actions `simSpeed` times faster than real ones. */
  hypervisor: { driver: 'builtin'; simSpeed: number; shutdownTimeoutSeconds: number }
  /** Invoicing: VAT rate (percent), payment term, and the seller printed on invoices. */
  billing: { vatPercent: number; dueDays: number; currency: string; seller: { name: string; address: string[]; vatNumber: string; iban: string } }
  /** Mail: the sender address, and where new support tickets are announced. */
  mail: { from: string; supportAddress: string }
  /** The built-in payments driver: payment links are `<paymentUrl>/<reference>`. */
  payments: { baseUrl: string }
  /**
   * The admin API (`/admin/v1`): on the main listener, or on its own port when `port` is set (then only there).
   * `token`: a fixed admin token (HOSTAPI_ADMIN_TOKEN) made valid at start, for sandboxes and CI.
   */
  admin: { port: number | null; token: string | null }
  /**
   * Sandbox mode: a controllable clock, reset to the seed, fault injection and a request journal.
   * `seedFile` (JSON or YAML) describes the data loaded on an empty database and on every reset.
   */
  sandbox: { enabled: boolean; seedFile: string | null; journalSize: number }
  /**
   * The key that encrypts secrets at rest (the built-in CA's private keys): `key` (HOSTAPI_SECRET_KEY, 32 bytes
   * as hex or base64) or `keyFile` (HOSTAPI_SECRET_KEY_FILE); neither: `<dataDir>/secret.key`, generated on first
   * start. `previous` (HOSTAPI_SECRET_KEY_PREVIOUS, comma separated) still open values during a rotation.
   */
  secrets: { key: string | null; keyFile: string | null; previous: string[] }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`)
  }
}

/** The DNS driver's settings (HOSTAPI_DNS_DRIVER and, for PowerDNS, HOSTAPI_POWERDNS_*). */
export type DnsDriverConfig =
  | { driver: 'builtin' }
  | { driver: 'powerdns'; url: string; apiKey: string; serverId: string }

/** A secondary of the built-in DNS server: it may transfer zones, and is sent NOTIFY when it is one address. */
export interface DnsSecondary {
  /** The address, or the first address of the range, as given (IPv4 or IPv6). */
  address: string
  /** The CIDR prefix length: 32 or 128 for one address. */
  prefixLength: number
  /** The UDP port NOTIFY goes to; null for a range, which is never notified. */
  notifyPort: number | null
}

/** Zone transfers (AXFR, IXFR) and NOTIFY of the built-in DNS server; no secondaries: no transfers. */
export interface DnsTransferConfig {
  secondaries: DnsSecondary[]
  /** The TSIG key (hmac-sha256) every transfer must be signed with, and NOTIFY is signed with; null: none. */
  tsigKey: { name: string; secret: string } | null
}

type Env = Record<string, string | undefined>

/** Reads HOSTAPI_DNS_SECONDARIES, HOSTAPI_DNS_TSIG_KEY and HOSTAPI_DNS_NOTIFY_PORT; problems go to `problems`. */
function dnsTransferConfig(env: Env, problems: string[]): DnsTransferConfig {
  const rawPort = env.HOSTAPI_DNS_NOTIFY_PORT || '53'
  const port = (raw: string, what: string): number => {
    const n = Number(raw)
    if (/^\d{1,5}$/.test(raw) && n >= 1 && n <= 65535) return n
    problems.push(`${what} must be a port from 1 to 65535 (got "${raw}")`)
    return 53
  }
  const notifyPort = port(rawPort, 'HOSTAPI_DNS_NOTIFY_PORT')
  const secondaries: DnsSecondary[] = []
  for (const entry of (env.HOSTAPI_DNS_SECONDARIES ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    // ip, ip/prefix, ipv4:port, [ipv6]:port
    const m = /^\[([^\]]+)\](?::(\d*))?$/.exec(entry) ?? /^([^:/]+):(\d*)$/.exec(entry)
    const ip = m ? m[1]! : entry
    const what = `HOSTAPI_DNS_SECONDARIES: "${entry}"`
    if (ip.includes('/')) {
      try {
        const [addr, prefixLength] = ipaddr.parseCIDR(ip)
        const single = prefixLength === (addr.kind() === 'ipv4' ? 32 : 128)
        secondaries.push({ address: addr.toString(), prefixLength, notifyPort: single ? notifyPort : null })
      } catch {
        problems.push(`${what} is not an IP address, CIDR range or address:port`)
      }
      continue
    }
    if (!ipaddr.IPv4.isValidFourPartDecimal(ip) && !ipaddr.IPv6.isValid(ip)) {
      problems.push(`${what} is not an IP address, CIDR range or address:port`)
      continue
    }
    const addr = ipaddr.parse(ip)
    const p = m?.[2] !== undefined ? port(m[2], what) : notifyPort
    secondaries.push({ address: addr.toString(), prefixLength: addr.kind() === 'ipv4' ? 32 : 128, notifyPort: p })
  }
  let tsigKey: DnsTransferConfig['tsigKey'] = null
  if (env.HOSTAPI_DNS_TSIG_KEY) {
    const key = parseTsigKey(env.HOSTAPI_DNS_TSIG_KEY)
    if (!key) problems.push('HOSTAPI_DNS_TSIG_KEY must be name:base64secret (hmac-sha256), e.g. transfer.key:c2VjcmV0')
    else tsigKey = { name: key.name, secret: key.secret.toString('base64') }
  }
  if (tsigKey && !secondaries.length) problems.push('HOSTAPI_DNS_TSIG_KEY is set but HOSTAPI_DNS_SECONDARIES is empty')
  if (secondaries.length && (env.HOSTAPI_DNS_DRIVER || 'builtin') !== 'builtin') {
    problems.push('HOSTAPI_DNS_SECONDARIES applies to the built-in DNS server only (HOSTAPI_DNS_DRIVER=builtin)')
  }
  return { secondaries, tsigKey }
}

/** Reads the DNS driver's settings; each problem is added to `problems`. */
function dnsDriverConfig(env: Env, problems: string[]): DnsDriverConfig {
  const driver = env.HOSTAPI_DNS_DRIVER || 'builtin'
  if (driver === 'builtin') return { driver }
  if (driver !== 'powerdns') {
    problems.push(`HOSTAPI_DNS_DRIVER must be builtin or powerdns (got "${driver}")`)
    return { driver: 'builtin' }
  }
  const url = env.HOSTAPI_POWERDNS_URL || ''
  const apiKey = env.HOSTAPI_POWERDNS_API_KEY || ''
  if (!url) problems.push('HOSTAPI_POWERDNS_URL must be set when HOSTAPI_DNS_DRIVER is powerdns')
  else if (!/^https?:\/\/[^\s/]+(\/\S*)?$/.test(url)) {
    problems.push(`HOSTAPI_POWERDNS_URL must be an http(s) URL (got "${url}")`)
  }
  if (!apiKey) problems.push('HOSTAPI_POWERDNS_API_KEY must be set when HOSTAPI_DNS_DRIVER is powerdns')
  return { driver, url, apiKey, serverId: env.HOSTAPI_POWERDNS_SERVER_ID || 'localhost' }
}

/** Reads every HOSTAPI_* variable (and DATABASE_URL, REDIS_URL); lists every problem at once. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = []
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return def
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`)
      return def
    }
    return n
  }
  const bool = (name: string, def: boolean): boolean => {
    const raw = env[name]
    if (raw === undefined || raw === '') return def
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false
    problems.push(`${name} must be 1/0, true/false, yes/no or on/off (got "${raw}")`)
    return def
  }
  const percent = (name: string, def: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return def
    const n = Number(raw)
    if (!/^\d{1,3}(\.\d{1,2})?$/.test(raw) || n > 100) {
      problems.push(`${name} must be a percentage from 0 to 100 with at most two decimals (got "${raw}")`)
      return def
    }
    return n
  }
  const email = (name: string, def: string): string => {
    const raw = env[name]
    if (raw === undefined || raw === '') return def
    if (!/^[^\s@]+@[^\s@]+$/.test(raw)) problems.push(`${name} must be an e-mail address (got "${raw}")`)
    return raw
  }
  const httpUrl = (name: string, def: string): string => {
    const raw = env[name]
    if (raw === undefined || raw === '') return def
    if (!/^https?:\/\/[^\s/]+(\/\S*)?$/.test(raw)) problems.push(`${name} must be an http(s) URL (got "${raw}")`)
    return raw
  }
  const positive = (name: string, def: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return def
    const n = Number(raw)
    if (!Number.isFinite(n) || n <= 0 || n > 1e9) {
      problems.push(`${name} must be a number above 0 and at most 1000000000 (got "${raw}")`)
      return def
    }
    return n
  }
  const list = (name: string): string[] =>
    (env[name] ?? '').split(',').map((s) => s.trim()).filter(Boolean)

  const HOST = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/
  const hostnames = (name: string, def: string): string[] => {
    const hosts = (env[name] || def).split(',').map((s) => s.trim().toLowerCase().replace(/\.$/, '')).filter(Boolean)
    for (const h of hosts) if (!HOST.test(h)) problems.push(`${name}: "${h}" is not a hostname`)
    if (hosts.length < 2 || hosts.length > 13) problems.push(`${name} must list 2 to 13 nameservers`)
    return hosts
  }
  // `name` or `name=AUTHCODE`, comma separated.
  const takenNames = (name: string, def: string) =>
    (env[name] ?? def).split(',').map((s) => s.trim()).filter(Boolean).map((entry) => {
      const [n, code] = entry.split('=', 2) as [string, string | undefined]
      const host = n.trim().toLowerCase().replace(/\.$/, '')
      if (!HOST.test(host)) problems.push(`${name}: "${n}" is not a domain name`)
      return { name: host, authCode: code?.trim() || null }
    })

  // Domain suffixes (one label or more, A-labels), comma separated; a leading or trailing dot is ignored.
  const SUFFIX = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
  const suffixes = (name: string): string[] =>
    list(name).map((s) => s.toLowerCase().replace(/^\.|\.$/g, '')).filter((s) => {
      if (!SUFFIX.test(s)) problems.push(`${name}: "${s}" is not a domain suffix`)
      return SUFFIX.test(s)
    })

  const dataDir = path.resolve(env.HOSTAPI_DATA_DIR || './data')
  const certFile = env.HOSTAPI_TLS_CERT || null
  const keyFile = env.HOSTAPI_TLS_KEY || null
  if ((certFile === null) !== (keyFile === null)) problems.push('HOSTAPI_TLS_CERT and HOSTAPI_TLS_KEY must be set together')

  const trustedProxies = list('HOSTAPI_TRUSTED_PROXIES')
  for (const p of trustedProxies) {
    const ok = p.includes('/') ? safe(() => ipaddr.parseCIDR(p)) : ipaddr.isValid(p)
    if (!ok) problems.push(`HOSTAPI_TRUSTED_PROXIES: "${p}" is not an IP address or CIDR range`)
  }

  const dbUrl = env.DATABASE_URL || ''
  let database: Config['database']
  if (dbUrl.startsWith('postgres://') || dbUrl.startsWith('postgresql://')) {
    database = { dialect: 'postgres', url: dbUrl, schema: env.HOSTAPI_DB_SCHEMA || null }
  } else if (dbUrl === '' || dbUrl.startsWith('sqlite:')) {
    const file = dbUrl.startsWith('sqlite:') ? dbUrl.slice('sqlite:'.length) : path.join(dataDir, 'hostapi.db')
    database = { dialect: 'sqlite', file: file === ':memory:' ? file : path.resolve(file) }
  } else {
    problems.push('DATABASE_URL must start with postgres://, postgresql:// or sqlite:')
    database = { dialect: 'sqlite', file: path.join(dataDir, 'hostapi.db') }
  }

  const redisUrl = env.REDIS_URL || null
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL must start with redis:// or rediss://')

  const demoKey = env.HOSTAPI_DEMO_KEY || null
  if (demoKey !== null && !/^[A-Za-z0-9_\-]{16,128}$/.test(demoKey)) {
    problems.push('HOSTAPI_DEMO_KEY must be 16 to 128 characters of A-Z, a-z, 0-9, _ and -')
  }

  const httpPort = int('HOSTAPI_HTTP_PORT', 0, 0, 65535)
  const dnsConfig = (): Config['dns'] => {
    const host = env.HOSTAPI_DNS_HOST || '127.0.0.1'
    if (!ipaddr.isValid(host)) problems.push(`HOSTAPI_DNS_HOST must be an IP address (got "${host}")`)
    const port = int('HOSTAPI_DNS_PORT', 5353, 0, 65535)
    return { host, port: port === 0 ? null : port }
  }
  const demoEnabled = bool('HOSTAPI_DEMO', true)
  const adminToken = env.HOSTAPI_ADMIN_TOKEN || null
  if (adminToken !== null && !/^adm_[A-Za-z0-9_-]{16,128}$/.test(adminToken)) {
    problems.push('HOSTAPI_ADMIN_TOKEN must be adm_ followed by 16 to 128 characters of A-Z, a-z, 0-9, _ and -')
  }
  const secretKey = env.HOSTAPI_SECRET_KEY || null
  const secretKeyFile = env.HOSTAPI_SECRET_KEY_FILE ? path.resolve(env.HOSTAPI_SECRET_KEY_FILE) : null
  const previousKeys = list('HOSTAPI_SECRET_KEY_PREVIOUS')
  if (secretKey !== null && secretKeyFile !== null) problems.push('Set HOSTAPI_SECRET_KEY or HOSTAPI_SECRET_KEY_FILE, not both')
  if (secretKey !== null && !parseSecretKey(secretKey)) problems.push('HOSTAPI_SECRET_KEY must be 32 bytes as 64 hex digits or as base64')
  if (previousKeys.some((k) => !parseSecretKey(k))) problems.push('HOSTAPI_SECRET_KEY_PREVIOUS must list keys of 32 bytes as 64 hex digits or as base64')
  const config: Config = {
    host: env.HOSTAPI_HOST || '127.0.0.1',
    port: int('HOSTAPI_PORT', 8443, 0, 65535),
    httpPort: env.HOSTAPI_HTTP_PORT ? httpPort : null,
    dataDir,
    tls: { certFile, keyFile, names: list('HOSTAPI_TLS_NAMES') },
    trustedProxies,
    database,
    redisUrl,
    redisPrefix: env.HOSTAPI_REDIS_PREFIX || 'hostapi:',
    demo: { enabled: demoEnabled, key: demoKey },
    logLevel: env.HOSTAPI_LOG_LEVEL || 'info',
    dns: dnsConfig(),
    dnsDriver: dnsDriverConfig(env, problems),
    dnsTransfer: dnsTransferConfig(env, problems),
    bodyLimit: int('HOSTAPI_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    rateLimit: {
      perKeyPerMinute: int('HOSTAPI_RATE_LIMIT', 1200, 1, 1_000_000_000),
      availabilityPerMinute: int('HOSTAPI_AVAILABILITY_RATE_LIMIT', 60, 1, 1_000_000),
    },
    authFailures: {
      limit: int('HOSTAPI_AUTH_FAIL_LIMIT', 20, 0, 1_000_000),
      windowSeconds: int('HOSTAPI_AUTH_FAIL_WINDOW', 300, 1, 86_400),
    },
    redisGuard: {
      timeoutMs: int('HOSTAPI_REDIS_TIMEOUT_MS', 50, 5, 10_000),
      retryMs: int('HOSTAPI_REDIS_RETRY_MS', 2000, 100, 600_000),
    },
    emptyWhitelistAllowsAll: bool('HOSTAPI_EMPTY_WHITELIST_ALLOWS_ALL', true),
    authCacheMs: int('HOSTAPI_AUTH_CACHE_MS', 1000, 0, 60_000),
    responseCacheMb: int('HOSTAPI_RESPONSE_CACHE_MB', 64, 0, 65_536),
    jobs: {
      enabled: bool('HOSTAPI_JOBS', true),
      pollMs: int('HOSTAPI_JOB_POLL_MS', 500, 10, 60_000),
      concurrency: int('HOSTAPI_JOB_CONCURRENCY', 4, 1, 64),
    },
    defaultNameservers: hostnames('HOSTAPI_DEFAULT_NAMESERVERS', 'ns1.hostapi.test,ns2.hostapi.test,ns3.hostapi.test'),
    registry: { taken: takenNames('HOSTAPI_REGISTRY_TAKEN', 'example.com,example.net,example.org=DEMO-TRANSFER-CODE') },
    domainNames: { privateSuffixes: suffixes('HOSTAPI_PRIVATE_SUFFIXES') },
    zones: {
      maxBytes: int('HOSTAPI_ZONE_MAX_BYTES', 10 * 1024 * 1024, 1024, 256 * 1024 * 1024),
      maxRecords: int('HOSTAPI_ZONE_MAX_RECORDS', 50_000, 1, 10_000_000),
      inlineBytes: int('HOSTAPI_ZONE_INLINE_BYTES', 64 * 1024, 0, 256 * 1024 * 1024),
      inlineRecords: int('HOSTAPI_ZONE_INLINE_RECORDS', 200, 0, 10_000_000),
      workers: int('HOSTAPI_ZONE_WORKERS', 1, 1, 64),
      queue: int('HOSTAPI_ZONE_QUEUE', 4, 0, 10_000),
      perAccount: int('HOSTAPI_ZONE_PER_ACCOUNT', 1, 1, 10_000),
    },
    hypervisor: {
      driver: 'builtin',
      simSpeed: positive('HOSTAPI_SIM_SPEED', 1),
      shutdownTimeoutSeconds: int('HOSTAPI_VPS_SHUTDOWN_TIMEOUT', 120, 1, 3600),
    },
    billing: {
      vatPercent: percent('HOSTAPI_VAT_PERCENT', 21),
      dueDays: int('HOSTAPI_INVOICE_DUE_DAYS', 14, 0, 365),
      currency: 'EUR',
      seller: {
        name: env.HOSTAPI_SELLER_NAME || 'hostapi',
        address: (env.HOSTAPI_SELLER_ADDRESS ?? '').split(';').map((s) => s.trim()).filter(Boolean),
        vatNumber: env.HOSTAPI_SELLER_VAT_NUMBER || '',
        iban: env.HOSTAPI_SELLER_IBAN || '',
      },
    },
    mail: {
      from: email('HOSTAPI_MAIL_FROM', 'hostapi@localhost.localdomain'),
      supportAddress: email('HOSTAPI_SUPPORT_EMAIL', 'support@localhost.localdomain'),
    },
    payments: { baseUrl: httpUrl('HOSTAPI_PAYMENT_URL', 'https://localhost:8443/pay') },
    admin: { port: env.HOSTAPI_ADMIN_PORT ? int('HOSTAPI_ADMIN_PORT', 0, 0, 65535) : null, token: adminToken },
    sandbox: {
      // On with the demo unless set; HOSTAPI_DEMO=0 alone turns it off.
      enabled: bool('HOSTAPI_SANDBOX', demoEnabled),
      seedFile: env.HOSTAPI_SEED_FILE ? path.resolve(env.HOSTAPI_SEED_FILE) : null,
      journalSize: int('HOSTAPI_JOURNAL_SIZE', 200, 1, 100_000),
    },
    secrets: { key: secretKey, keyFile: secretKeyFile, previous: previousKeys },
    ...overrides,
  }
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    problems.push('HOSTAPI_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent')
  }
  if (problems.length) throw new ConfigError(problems)
  return Object.freeze(config)
}

function safe(fn: () => unknown): boolean {
  try {
    fn()
    return true
  } catch {
    return false
  }
}
