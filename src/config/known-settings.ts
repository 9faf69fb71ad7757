/**
 * Every environment variable hostapi reads (all in this folder; test/config-explains.test.ts checks the list
 * against the sources). A `HOSTAPI_*` variable not listed draws a warning naming the nearest listed one.
 */
export const KNOWN_SETTINGS: readonly string[] = [
  'DATABASE_URL',
  'HOSTAPI_ACME_CA_BUNDLE',
  'HOSTAPI_ACME_DIRECTORY',
  'HOSTAPI_ACME_EAB_HMAC_KEY',
  'HOSTAPI_ACME_EAB_KID',
  'HOSTAPI_ACME_EMAIL',
  'HOSTAPI_ACME_HTTP_PORT',
  'HOSTAPI_ACME_RENEW_DAYS',
  'HOSTAPI_ADMIN_HOST',
  'HOSTAPI_ADMIN_PORT',
  'HOSTAPI_ADMIN_TOKEN',
  'HOSTAPI_AUDIT_RETENTION_DAYS',
  'HOSTAPI_AUTH_CACHE_MS',
  'HOSTAPI_AUTH_FAIL_LIMIT',
  'HOSTAPI_AUTH_FAIL_WINDOW',
  'HOSTAPI_AVAILABILITY_RATE_LIMIT',
  'HOSTAPI_BODY_LIMIT',
  'HOSTAPI_CA_DRIVER',
  'HOSTAPI_CRASH_AT',
  'HOSTAPI_DATA_DIR',
  'HOSTAPI_DB_CONNECT_TIMEOUT_MS',
  'HOSTAPI_DB_PREPARED_STATEMENTS',
  'HOSTAPI_DB_SCHEMA',
  'HOSTAPI_DEFAULT_NAMESERVERS',
  'HOSTAPI_DEMO',
  'HOSTAPI_DEMO_KEY',
  'HOSTAPI_DKIM_DOMAIN',
  'HOSTAPI_DKIM_KEY_FILE',
  'HOSTAPI_DKIM_SELECTOR',
  'HOSTAPI_DNS_CATALOG_ZONE',
  'HOSTAPI_DNS_DRIVER',
  'HOSTAPI_DNS_HOST',
  'HOSTAPI_DNS_NOTIFY_PORT',
  'HOSTAPI_DNS_PORT',
  'HOSTAPI_DNS_RRL_RESPONSES_PER_SECOND',
  'HOSTAPI_DNS_RRL_SLIP',
  'HOSTAPI_DNS_RRL_WINDOW',
  'HOSTAPI_DNS_SECONDARIES',
  'HOSTAPI_DNS_TSIG_KEY',
  'HOSTAPI_EMPTY_WHITELIST_ALLOWS_ALL',
  'HOSTAPI_HEADERS_TIMEOUT_MS',
  'HOSTAPI_HOST',
  'HOSTAPI_HTTP_PORT',
  'HOSTAPI_HYPERVISOR_DRIVER',
  'HOSTAPI_IDEMPOTENCY_LOCK_MS',
  'HOSTAPI_IDLE_TIMEOUT_MS',
  'HOSTAPI_INVOICE_DUE_DAYS',
  'HOSTAPI_JOBS',
  'HOSTAPI_JOB_CONCURRENCY',
  'HOSTAPI_JOB_LEASE_MS',
  'HOSTAPI_JOB_POLL_MS',
  'HOSTAPI_JOB_RETENTION_DAYS',
  'HOSTAPI_JOURNAL_SIZE',
  'HOSTAPI_JSON_MAX_DEPTH',
  'HOSTAPI_JSON_MAX_VALUES',
  'HOSTAPI_LOG_LEVEL',
  'HOSTAPI_LXD_CA',
  'HOSTAPI_LXD_CLIENT_CERT',
  'HOSTAPI_LXD_CLIENT_KEY',
  'HOSTAPI_LXD_FLOATING_IPS',
  'HOSTAPI_LXD_INSTANCE_TYPE',
  'HOSTAPI_LXD_LOCATION',
  'HOSTAPI_LXD_NETWORK',
  'HOSTAPI_LXD_PRIVATE_NETWORK_PREFIX',
  'HOSTAPI_LXD_PROJECT',
  'HOSTAPI_LXD_STORAGE_POOL',
  'HOSTAPI_LXD_TENANT_PREFIX',
  'HOSTAPI_LXD_TENANT_SUBNETS',
  'HOSTAPI_LXD_URL',
  'HOSTAPI_MAIL_DRIVER',
  'HOSTAPI_MAIL_FROM',
  'HOSTAPI_MAIL_RETENTION_DAYS',
  'HOSTAPI_MAX_CONNECTIONS_PER_IP',
  'HOSTAPI_PAYMENT_URL',
  'HOSTAPI_PORT',
  'HOSTAPI_POWERDNS_API_KEY',
  'HOSTAPI_POWERDNS_CONCURRENCY',
  'HOSTAPI_POWERDNS_DNS_ADDRESS',
  'HOSTAPI_POWERDNS_MAX_BODY_BYTES',
  'HOSTAPI_POWERDNS_PROBE_MS',
  'HOSTAPI_POWERDNS_SERVER_ID',
  'HOSTAPI_POWERDNS_URL',
  'HOSTAPI_PRIVATE_SUFFIXES',
  'HOSTAPI_RATE_LIMIT',
  'HOSTAPI_REDIS_PREFIX',
  'HOSTAPI_REDIS_RETRY_MS',
  'HOSTAPI_REDIS_TIMEOUT_MS',
  'HOSTAPI_REGISTRY_TAKEN',
  'HOSTAPI_REQUEST_LOG',
  'HOSTAPI_REQUEST_TIMEOUT_MS',
  'HOSTAPI_RESPONSE_CACHE_MB',
  'HOSTAPI_SANDBOX',
  'HOSTAPI_SANDBOX_CRASH_JOB',
  'HOSTAPI_SECRET_KEY',
  'HOSTAPI_SECRET_KEY_FILE',
  'HOSTAPI_SECRET_KEY_NEXT',
  'HOSTAPI_SECRET_KEY_PREVIOUS',
  'HOSTAPI_SEED_FILE',
  'HOSTAPI_SELLER_ADDRESS',
  'HOSTAPI_SELLER_IBAN',
  'HOSTAPI_SELLER_NAME',
  'HOSTAPI_SELLER_VAT_NUMBER',
  'HOSTAPI_SIM_SPEED',
  'HOSTAPI_SMTP_CA_FILE',
  'HOSTAPI_SMTP_URL',
  'HOSTAPI_SUPPORT_EMAIL',
  'HOSTAPI_TLS_CERT',
  'HOSTAPI_TLS_HANDSHAKE_TIMEOUT_MS',
  'HOSTAPI_TLS_KEY',
  'HOSTAPI_TLS_NAMES',
  'HOSTAPI_TRUSTED_PROXIES',
  'HOSTAPI_VAT_PERCENT',
  'HOSTAPI_VPS_SHUTDOWN_TIMEOUT',
  'HOSTAPI_WEBHOOKS_ACCOUNT_CONCURRENCY',
  'HOSTAPI_WEBHOOKS_ALLOW_HTTP',
  'HOSTAPI_WEBHOOKS_ALLOW_PRIVATE',
  'HOSTAPI_WEBHOOKS_CA_FILE',
  'HOSTAPI_WEBHOOKS_CONCURRENCY',
  'HOSTAPI_WEBHOOKS_ENDPOINT_CONCURRENCY',
  'HOSTAPI_WEBHOOKS_MAX_ENDPOINTS',
  'HOSTAPI_WEBHOOKS_TIMEOUT_MS',
  'HOSTAPI_WORKERS',
  'HOSTAPI_ZONE_INLINE_BYTES',
  'HOSTAPI_ZONE_INLINE_RECORDS',
  'HOSTAPI_ZONE_MAX_BYTES',
  'HOSTAPI_ZONE_MAX_RECORDS',
  'HOSTAPI_ZONE_PER_ACCOUNT',
  'HOSTAPI_ZONE_QUEUE',
  'HOSTAPI_ZONE_WORKERS',
  'REDIS_URL',
]

/** Variables the test suite reads, never hostapi: no warning for them. */
const TEST_PREFIX = 'HOSTAPI_TEST_'

/** The edit distance (insertions, deletions, substitutions, transpositions of neighbours) of `a` and `b`. */
export function editDistance(a: string, b: string): number {
  // d[i][j]: the distance of the first i characters of a and the first j of b, filled row by row
  const d: number[][] = []
  const cell = (i: number, j: number): number => {
    const value = d[i]?.[j]
    if (value === undefined) throw new Error(`editDistance: cell ${i},${j} read before it was filled`)
    return value
  }
  for (let i = 0; i <= a.length; i++) {
    const row = [i]
    d.push(row)
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j)
        continue
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(cell(i - 1, j) + 1, cell(i, j - 1) + 1, cell(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, cell(i - 2, j - 2) + 1)
      row.push(best)
    }
  }
  return cell(a.length, b.length)
}

/**
 * One warning per `HOSTAPI_*` variable of `env` that hostapi does not read: it names the nearest known variable
 * when one is a few edits away (a third of the name's length at most).
 */
export function unknownSettings(env: Record<string, string | undefined>): string[] {
  const warnings: string[] = []
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('HOSTAPI_') || name.startsWith(TEST_PREFIX) || KNOWN_SETTINGS.includes(name)) continue
    let nearest: string | null = null
    let distance = Math.max(2, Math.floor(name.length / 3)) + 1
    for (const known of KNOWN_SETTINGS) {
      const dist = editDistance(name, known)
      if (dist < distance) {
        nearest = known
        distance = dist
      }
    }
    warnings.push(
      nearest
        ? `${name} is not a hostapi setting and is ignored: did you mean ${nearest}?`
        : `${name} is not a hostapi setting and is ignored (docs/configuration.md lists the settings)`,
    )
  }
  return warnings
}
