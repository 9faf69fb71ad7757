import path from 'node:path'
import type { EnvReader } from './env-reader.js'
import { bareHost } from '../lib/public-address.js'
import { present } from '../lib/invariant.js'

// The mail section of the configuration: the built-in outbox or an SMTP relay, with DKIM signing.

/** The mail driver's settings (HOSTAPI_MAIL_DRIVER and, for an SMTP relay, HOSTAPI_SMTP_* and HOSTAPI_DKIM_*). */
export type MailDriverConfig = { driver: 'builtin' } | { driver: 'smtp'; smtp: SmtpConfig }

/** An SMTP relay: where it is, how the connection is secured, the login, a private CA, and DKIM signing. */
export interface SmtpConfig {
  host: string
  port: number
  /** `tls`: TLS from the start (smtps://); `starttls`: STARTTLS required (smtp://); `none`: plain (?starttls=false). */
  security: 'tls' | 'starttls' | 'none'
  user: string | null
  /** Never logged nor shown in a problem or error. */
  password: string | null
  /** PEM file of a CA to trust for the relay's certificate, besides the system's. */
  caFile: string | null
  dkim: { domain: string; selector: string; keyFile: string } | null
}

const DKIM_VARS = ['HOSTAPI_DKIM_DOMAIN', 'HOSTAPI_DKIM_SELECTOR', 'HOSTAPI_DKIM_KEY_FILE'] as const

/** The mail driver: the built-in outbox, or an SMTP relay given as HOSTAPI_SMTP_URL. */
export function mailDriverConfig(r: EnvReader): MailDriverConfig {
  const env = r.env
  const driver = env.HOSTAPI_MAIL_DRIVER || 'builtin'
  const smtpVars = ['HOSTAPI_SMTP_URL', 'HOSTAPI_SMTP_CA_FILE', ...DKIM_VARS].filter((v) => env[v])
  if (driver === 'builtin') {
    if (smtpVars.length) r.problem(`${smtpVars.join(', ')} apply to HOSTAPI_MAIL_DRIVER=smtp only`)
    return { driver }
  }
  if (driver !== 'smtp') {
    r.problem(`HOSTAPI_MAIL_DRIVER must be builtin or smtp (got "${driver}")`)
    return { driver: 'builtin' }
  }
  const raw = env.HOSTAPI_SMTP_URL || ''
  const smtp = raw ? smtpUrl(r, raw) : null
  if (!raw) r.problem('HOSTAPI_SMTP_URL must be set when HOSTAPI_MAIL_DRIVER is smtp')
  const caFile = filePath(r, 'HOSTAPI_SMTP_CA_FILE')
  let dkim: SmtpConfig['dkim'] = null
  const dkimSet = DKIM_VARS.filter((v) => env[v])
  if (dkimSet.length && dkimSet.length < DKIM_VARS.length) {
    r.problem(`${DKIM_VARS.join(', ')} must be set together (DKIM signing) or not at all`)
  } else if (dkimSet.length) {
    // every one of DKIM_VARS is set here
    const domain = present(env.HOSTAPI_DKIM_DOMAIN, 'HOSTAPI_DKIM_DOMAIN').toLowerCase().replace(/\.$/, '')
    const selector = present(env.HOSTAPI_DKIM_SELECTOR, 'HOSTAPI_DKIM_SELECTOR')
    if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(domain)) {
      r.problem(`HOSTAPI_DKIM_DOMAIN must be a domain name (got "${env.HOSTAPI_DKIM_DOMAIN}")`)
    }
    if (!/^[A-Za-z0-9_-]{1,63}(\.[A-Za-z0-9_-]{1,63})*$/.test(selector)) {
      r.problem(`HOSTAPI_DKIM_SELECTOR must be one or more DNS labels (got "${selector}")`)
    }
    dkim = { domain, selector, keyFile: present(filePath(r, 'HOSTAPI_DKIM_KEY_FILE'), 'HOSTAPI_DKIM_KEY_FILE') }
  }
  if (!smtp) return { driver: 'builtin' }
  return { driver, smtp: { ...smtp, caFile, dkim } }
}

/** The relay of HOSTAPI_SMTP_URL; problems quote the URL with its password masked. */
function smtpUrl(
  r: EnvReader,
  raw: string,
): Pick<SmtpConfig, 'host' | 'port' | 'security' | 'user' | 'password'> | null {
  const masked = raw.replace(/^([a-z]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@')
  const bad = (why: string) => {
    r.problem(`HOSTAPI_SMTP_URL ${why} (got "${masked}")`)
    return null
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return bad('must be smtp://[user:password@]host[:port] or smtps://…')
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return bad('must start with smtp:// or smtps://')
  const host = bareHost(url.hostname)
  if (!host) return bad('has no host')
  if (url.pathname && url.pathname !== '/') return bad('must not have a path')
  const implicitTls = url.protocol === 'smtps:'
  let security: SmtpConfig['security'] = implicitTls ? 'tls' : 'starttls'
  for (const [key, value] of url.searchParams) {
    if (key !== 'starttls' || implicitTls || !['true', 'false'].includes(value)) {
      return bad('takes no query but ?starttls=false (or true) on smtp://')
    }
    if (value === 'false') security = 'none'
  }
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s)
    } catch {
      return s
    }
  }
  return {
    host,
    port: url.port ? Number(url.port) : implicitTls ? 465 : 587,
    security,
    user: url.username ? decode(url.username) : null,
    password: url.password ? decode(url.password) : null,
  }
}

/** The absolute path of the file a variable names (read, and checked, by the driver at start); null when unset. */
function filePath(r: EnvReader, name: string): string | null {
  const raw = r.env[name]
  return raw ? path.resolve(raw) : null
}
