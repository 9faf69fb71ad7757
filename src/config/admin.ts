import ipaddr from 'ipaddr.js'
import type { EnvReader } from './env-reader.js'

/**
 * The admin API's listener and fixed token. HOSTAPI_ADMIN_HOST defaults to 127.0.0.1 whatever HOSTAPI_HOST is, so
 * an admin listener (the admin API and `/metrics`) stays off the network the customer API is served on unless the
 * operator binds it elsewhere on purpose.
 */
export interface AdminConfig {
  host: string
  port: number | null
  token: string | null
}

export function adminConfig(r: EnvReader): AdminConfig {
  const { env } = r
  const port = env.HOSTAPI_ADMIN_PORT ? r.int('HOSTAPI_ADMIN_PORT', 0, 0, 65535) : null
  const host = env.HOSTAPI_ADMIN_HOST || '127.0.0.1'
  if (!ipaddr.isValid(host)) r.problem(`HOSTAPI_ADMIN_HOST must be an IP address (got "${host}")`)
  else if (env.HOSTAPI_ADMIN_HOST && port === null)
    r.problem('HOSTAPI_ADMIN_HOST needs HOSTAPI_ADMIN_PORT (without it the admin API is on the main listener)')
  const token = env.HOSTAPI_ADMIN_TOKEN || null
  if (token !== null && !/^adm_[A-Za-z0-9_-]{16,128}$/.test(token)) {
    r.problem('HOSTAPI_ADMIN_TOKEN must be adm_ followed by 16 to 128 characters of A-Z, a-z, 0-9, _ and -')
  }
  return { host, port, token }
}
