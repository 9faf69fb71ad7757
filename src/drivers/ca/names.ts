/** Name rules shared by the certificate module and the CA drivers. */

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * True for a name a public certificate can carry: a lower-case DNS name of at least two labels, each
 * letters, digits and inner hyphens (IDNs in their `xn--` form), optionally starting with one `*.` label.
 */
export function isCertificateName(name: string): boolean {
  if (name.length > 253) return false
  const rest = name.startsWith('*.') ? name.slice(2) : name
  const labels = rest.split('.')
  if (labels.length < 2) return false
  if (!labels.every((l) => LABEL.test(l))) return false
  return !/^[0-9]+$/.test(labels[labels.length - 1])
}

/** The name whose control a CA checks: a wildcard's parent (`*.example.com` → `example.com`). */
export const baseName = (name: string): string => (name.startsWith('*.') ? name.slice(2) : name)

/** True when `domain` is `name` itself or one of its parents. */
export const isSameOrParent = (domain: string, name: string): boolean => name === domain || name.endsWith(`.${domain}`)
