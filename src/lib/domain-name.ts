import { domainToASCII, domainToUnicode } from 'node:url'
import { getPublicSuffix } from 'tldts'

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/
/** Characters of an ASCII name; anything else ASCII (`%`, `_`, `@`, spaces, control characters) is refused as is. */
const ASCII_NAME = /^[a-z0-9.-]*$/
/** Code points allowed in a U-label: letters, combining marks (not first), decimal digits and the hyphen (IDNA2008's PVALID, roughly). */
const U_LABEL = /^[\p{L}\p{Nd}][\p{L}\p{M}\p{Nd}-]*$/u
/** Longer input cannot become a name of at most 253 characters, whatever IDNA maps away; refused before any work. */
const MAX_INPUT = 1024

/** UTS #46 mapping to A-labels; '' when the input cannot be mapped. */
function toAscii(unicode: string): string {
  try {
    return domainToASCII(unicode)
  } catch {
    return ''
  }
}

/**
 * Whether an A-label (`xn--…`) is the canonical encoding of a valid U-label: it decodes, contains something
 * beyond ASCII, encodes back to itself, and holds only letters, marks and digits (no symbols, emoji, format characters).
 */
function validALabel(label: string): boolean {
  let unicode: string
  try {
    unicode = domainToUnicode(label)
  } catch {
    return false
  }
  if (!unicode || unicode === label || !/[^\x00-\x7f]/.test(unicode)) return false
  if (toAscii(unicode) !== label) return false
  return U_LABEL.test(unicode.normalize('NFC'))
}

/**
 * A domain name in stored form (lower case, no trailing dot, IDN as punycode A-labels), or null when `raw`
 * is not one: at least two labels of letters/digits/hyphens (at most 63 each, 253 in all), a TLD of letters
 * or an IDN TLD. Unicode input is mapped with UTS #46 and stored as A-labels; an `xn--` label must be valid
 * punycode of a valid U-label. Never throws, for any string.
 */
export function parseDomainName(raw: string): string | null {
  if (typeof raw !== 'string' || raw.length > MAX_INPUT) return null
  let name = raw.trim().toLowerCase()
  if (/[^\x00-\x7f]/.test(name)) {
    // ASCII characters that a URL parser would decode or drop (`%2e`, `_`, NUL) are refused before mapping.
    if (/[\x00-\x7f]/.test(name.replace(/[a-z0-9.-]/g, ''))) return null
    name = toAscii(name)
    if (!name) return null
  } else if (!ASCII_NAME.test(name)) return null
  if (name.endsWith('.')) name = name.slice(0, -1)
  if (name === '' || name.length > 253) return null
  const labels = name.split('.')
  if (labels.length < 2) return null
  for (const l of labels) {
    if (!LABEL.test(l)) return null
    if (l.startsWith('xn--') && !validALabel(l)) return null
  }
  if (!TLD.test(name.slice(name.lastIndexOf('.') + 1))) return null
  return name
}

/**
 * The registrable-name rules: the public suffixes are the ICANN section of the Public Suffix List (through
 * `tldts`; a TLD not on the list is a public suffix of its own, the list's default rule) plus the operator's
 * private suffixes. The list's private section (`github.io`, `blogspot.com`, …) is not used: those are names
 * their owners registered under an ICANN suffix, so `github.io` is registrable and `x.github.io` is not.
 */
export class DomainNames {
  private readonly privateSuffixes: ReadonlySet<string>

  constructor(privateSuffixes: Iterable<string> = []) {
    this.privateSuffixes = new Set(
      [...privateSuffixes].map((s) => s.toLowerCase().replace(/^\.+|\.+$/g, '')).filter(Boolean),
    )
  }

  /** The public suffix of a stored-form name (the longest of the ICANN one and a private one), or null. */
  publicSuffixOf(name: string): string | null {
    let suffix = getPublicSuffix(name, {
      allowPrivateDomains: false,
      extractHostname: false,
      validateHostname: false,
      detectIp: false,
      mixedInputs: false,
    })
    if (this.privateSuffixes.size > 0) {
      const labels = name.split('.')
      for (let i = 0; i < labels.length; i++) {
        const candidate = labels.slice(i).join('.')
        if (!this.privateSuffixes.has(candidate)) continue
        if (!suffix || candidate.length > suffix.length) suffix = candidate
        break
      }
    }
    return suffix || null
  }

  /**
   * The registrable domain a stored-form host name falls under: the one label below its public suffix
   * (`mail.demo-shop.nl` → `demo-shop.nl`), or null when the host is a public suffix itself or has none.
   */
  registrableDomainOf(host: string): string | null {
    const suffix = this.publicSuffixOf(host)
    if (!suffix || host === suffix || !host.endsWith(`.${suffix}`)) return null
    const rest = host.slice(0, host.length - suffix.length - 1)
    const label = rest.slice(rest.lastIndexOf('.') + 1)
    return label ? `${label}.${suffix}` : null
  }

  /**
   * `raw` as a registrable name in stored form, or null: a valid domain name (see `parseDomainName`) that is
   * exactly one label below a public suffix (`demo-shop.nl`, `example.co.uk`; not `co.uk`, not `a.example.com`),
   * whose label is not a reserved `??--` form other than a valid `xn--` A-label. Never throws.
   */
  registrable(raw: string): string | null {
    const name = parseDomainName(raw)
    if (!name || this.registrableDomainOf(name) !== name) return null
    const label = name.slice(0, name.indexOf('.'))
    if (label.slice(2, 4) === '--' && !label.startsWith('xn--')) return null
    return name
  }
}

/** The extension (TLD, and second-level public suffix where the name has one, e.g. `co.uk`) of a stored name. */
export function extensionOf(name: string, known: (ext: string) => boolean = () => false): string {
  const labels = name.split('.')
  if (labels.length > 2) {
    const two = labels.slice(-2).join('.')
    if (known(two)) return two
  }
  return name.slice(name.lastIndexOf('.') + 1)
}

/** A hostname for a nameserver (lower case, no trailing dot), or null. */
export function parseHostname(raw: string): string | null {
  const name = parseDomainName(raw)
  return name && name.split('.').length >= 2 ? name : null
}

/** `YYYY-MM-DD` of `d` plus `years` (29 February becomes 28 February in a non-leap year). */
export function addYears(day: string, years: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number]
  const date = new Date(Date.UTC(y + years, m - 1, d))
  if (date.getUTCMonth() !== m - 1) date.setUTCDate(0)
  return date.toISOString().slice(0, 10)
}
