import ipaddr from 'ipaddr.js'

/** Environment variables by name. */
export type Env = Record<string, string | undefined>

const HOST = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/
// Domain suffixes (one label or more, A-labels); a leading or trailing dot is ignored.
const SUFFIX = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/

/**
 * Typed values from the environment: an unset or empty variable gives the default, a bad one gives the
 * default too and adds a problem, so every problem can be listed at once.
 */
export class EnvReader {
  readonly problems: string[] = []
  constructor(readonly env: Env) {}

  /** Records a problem with the configuration (once: a variable read by two sections is reported once). */
  problem(text: string): void {
    if (!this.problems.includes(text)) this.problems.push(text)
  }

  /** An integer from `min` to `max`. */
  int(name: string, def: number, min: number, max: number): number {
    const raw = this.env[name]
    if (raw === undefined || raw === '') return def
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problem(`${name} must be an integer from ${min} to ${max} (got "${raw}")`)
      return def
    }
    return n
  }

  /** 1/0, true/false, yes/no or on/off. */
  bool(name: string, def: boolean): boolean {
    const raw = this.env[name]
    if (raw === undefined || raw === '') return def
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false
    this.problem(`${name} must be 1/0, true/false, yes/no or on/off (got "${raw}")`)
    return def
  }

  /** A percentage from 0 to 100 with at most two decimals. */
  percent(name: string, def: number): number {
    const raw = this.env[name]
    if (raw === undefined || raw === '') return def
    const n = Number(raw)
    if (!/^\d{1,3}(\.\d{1,2})?$/.test(raw) || n > 100) {
      this.problem(`${name} must be a percentage from 0 to 100 with at most two decimals (got "${raw}")`)
      return def
    }
    return n
  }

  /** An e-mail address (a bad one is still returned, with a problem). */
  email(name: string, def: string): string {
    const raw = this.env[name]
    if (raw === undefined || raw === '') return def
    if (!/^[^\s@]+@[^\s@]+$/.test(raw)) this.problem(`${name} must be an e-mail address (got "${raw}")`)
    return raw
  }

  /** An http(s) URL (a bad one is still returned, with a problem). */
  httpUrl(name: string, def: string): string {
    const raw = this.env[name]
    if (raw === undefined || raw === '') return def
    if (!/^https?:\/\/[^\s/]+(\/\S*)?$/.test(raw)) this.problem(`${name} must be an http(s) URL (got "${raw}")`)
    return raw
  }

  /** A number above 0 and at most 1e9. */
  positive(name: string, def: number): number {
    const raw = this.env[name]
    if (raw === undefined || raw === '') return def
    const n = Number(raw)
    if (!Number.isFinite(n) || n <= 0 || n > 1e9) {
      this.problem(`${name} must be a number above 0 and at most 1000000000 (got "${raw}")`)
      return def
    }
    return n
  }

  /** A comma-separated list, trimmed, without empty entries. */
  list(name: string): string[] {
    return (this.env[name] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  }

  /** IP addresses and CIDR ranges, comma separated. */
  addresses(name: string): string[] {
    const entries = this.list(name)
    for (const p of entries) {
      const ok = p.includes('/') ? safe(() => ipaddr.parseCIDR(p)) : ipaddr.isValid(p)
      if (!ok) this.problem(`${name}: "${p}" is not an IP address or CIDR range`)
    }
    return entries
  }

  /** 2 to 13 nameserver hostnames, comma separated. */
  hostnames(name: string, def: string): string[] {
    const hosts = (this.env[name] || def)
      .split(',')
      .map((s) => s.trim().toLowerCase().replace(/\.$/, ''))
      .filter(Boolean)
    for (const h of hosts) if (!HOST.test(h)) this.problem(`${name}: "${h}" is not a hostname`)
    if (hosts.length < 2 || hosts.length > 13) this.problem(`${name} must list 2 to 13 nameservers`)
    return hosts
  }

  /** Domain names as `name` or `name=AUTHCODE`, comma separated. */
  takenNames(name: string, def: string): { name: string; authCode: string | null }[] {
    return (this.env[name] ?? def)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((entry) => {
        const [n, code] = entry.split('=', 2) as [string, string | undefined]
        const host = n.trim().toLowerCase().replace(/\.$/, '')
        if (!HOST.test(host)) this.problem(`${name}: "${n}" is not a domain name`)
        return { name: host, authCode: code?.trim() || null }
      })
  }

  /** Domain suffixes (one label or more, A-labels), comma separated; a bad one is left out, with a problem. */
  suffixes(name: string): string[] {
    return this.list(name)
      .map((s) => s.toLowerCase().replace(/^\.|\.$/g, ''))
      .filter((s) => {
        if (!SUFFIX.test(s)) this.problem(`${name}: "${s}" is not a domain suffix`)
        return SUFFIX.test(s)
      })
  }
}

function safe(fn: () => unknown): boolean {
  try {
    fn()
    return true
  } catch {
    return false
  }
}
