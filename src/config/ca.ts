import path from 'node:path'
import type { EnvReader } from './env-reader.js'

// The certificate authority section of the configuration: hostapi's own test CA or an ACME server.

/** Let's Encrypt's production directory, the default ACME server. */
export const LETS_ENCRYPT_DIRECTORY = 'https://acme-v02.api.letsencrypt.org/directory'

/** The CA driver's settings (HOSTAPI_CA_DRIVER and, for ACME, HOSTAPI_ACME_*). */
export type CaDriverConfig = { driver: 'builtin' } | { driver: 'acme'; acme: AcmeConfig }

/** An ACME server and the account hostapi holds there. */
export interface AcmeConfig {
  directoryUrl: string
  /** The account's contact address, or null for none. */
  email: string | null
  /** External account binding (ZeroSSL, Sectigo); the HMAC key is never logged nor shown. */
  eab: { kid: string; hmacKey: string } | null
  /** PEM file of the CA that signed the ACME server's own TLS certificate, besides the system's. */
  caBundle: string | null
  /** The port the CA fetches http-01 files on (80; another only for test CAs such as pebble). */
  httpPort: number
  /** Days before a leaf's expiry that it is renewed, while the paid term lasts longer. */
  renewDays: number
}

const ACME_VARS = [
  'HOSTAPI_ACME_DIRECTORY',
  'HOSTAPI_ACME_EMAIL',
  'HOSTAPI_ACME_EAB_KID',
  'HOSTAPI_ACME_EAB_HMAC_KEY',
  'HOSTAPI_ACME_CA_BUNDLE',
  'HOSTAPI_ACME_HTTP_PORT',
  'HOSTAPI_ACME_RENEW_DAYS',
] as const

/** The CA driver: the built-in CA, or an ACME server (HOSTAPI_ACME_DIRECTORY, Let's Encrypt by default). */
export function caDriverConfig(r: EnvReader): CaDriverConfig {
  const env = r.env
  const driver = env.HOSTAPI_CA_DRIVER || 'builtin'
  if (driver === 'builtin') {
    const set = ACME_VARS.filter((v) => env[v])
    if (set.length) r.problem(`${set.join(', ')} apply to HOSTAPI_CA_DRIVER=acme only`)
    return { driver }
  }
  if (driver !== 'acme') {
    r.problem(`HOSTAPI_CA_DRIVER must be builtin or acme (got "${driver}")`)
    return { driver: 'builtin' }
  }
  const directoryUrl = r.httpUrl('HOSTAPI_ACME_DIRECTORY', LETS_ENCRYPT_DIRECTORY)
  const email = env.HOSTAPI_ACME_EMAIL ? r.email('HOSTAPI_ACME_EMAIL', '') : null
  const kid = env.HOSTAPI_ACME_EAB_KID || ''
  const hmacKey = env.HOSTAPI_ACME_EAB_HMAC_KEY || ''
  if (!kid !== !hmacKey)
    r.problem('HOSTAPI_ACME_EAB_KID and HOSTAPI_ACME_EAB_HMAC_KEY must be set together or not at all')
  else if (hmacKey && !/^[A-Za-z0-9_-]+={0,2}$/.test(hmacKey))
    r.problem('HOSTAPI_ACME_EAB_HMAC_KEY must be base64url, as the CA gives it (its value is not shown)')
  const caBundle = env.HOSTAPI_ACME_CA_BUNDLE ? path.resolve(env.HOSTAPI_ACME_CA_BUNDLE) : null
  const httpPort = r.int('HOSTAPI_ACME_HTTP_PORT', 80, 1, 65_535)
  // Let's Encrypt advises renewing a 90-day leaf with a third of its life left.
  const renewDays = r.int('HOSTAPI_ACME_RENEW_DAYS', 30, 1, 365)
  return {
    driver,
    acme: { directoryUrl, email, eab: kid && hmacKey ? { kid, hmacKey } : null, caBundle, httpPort, renewDays },
  }
}
