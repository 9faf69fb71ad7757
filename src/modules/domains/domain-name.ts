import { domainToASCII } from 'node:url'

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/

/**
 * A registrable domain name in stored form (lower case, no trailing dot, IDN as punycode), or null when
 * `raw` is not one: at least two labels, letters/digits/hyphens, a TLD of letters (or an IDN TLD).
 */
export function parseDomainName(raw: string): string | null {
  let name = raw.trim().toLowerCase()
  if (name.endsWith('.')) name = name.slice(0, -1)
  if (name === '' || name.length > 253) return null
  if (/[^\x00-\x7f]/.test(name)) {
    name = domainToASCII(name)
    if (!name) return null
  }
  const labels = name.split('.')
  if (labels.length < 2) return null
  if (!labels.every((l) => LABEL.test(l))) return null
  if (!TLD.test(labels[labels.length - 1]!)) return null
  return name
}

/** The extension (TLD, and second-level public suffix where the name has one, e.g. `co.uk`) of a stored name. */
export function extensionOf(name: string, known: (ext: string) => boolean = () => false): string {
  const labels = name.split('.')
  if (labels.length > 2) {
    const two = labels.slice(-2).join('.')
    if (known(two)) return two
  }
  return labels[labels.length - 1]!
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
