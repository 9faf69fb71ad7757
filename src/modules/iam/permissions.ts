/** The permission names of the specification, each a boolean on an account user. */
export const PERMISSIONS = [
  'domains',
  'domains-profiles',
  'domains-nameservers',
  'domains-dns-templates',
  'hosting',
  'public-cloud',
  'vps',
  'dedicated-servers',
  'microsoft-365',
  'certificates',
  'account',
  'account-profile',
  'account-paymethods',
  'account-invoices',
  'account-api',
  'account-users',
  'account-tickets',
  'account-affiliate',
  'reseller-settings',
  'reseller-whitelabel-management',
  'reseller-email-templates',
  'order',
] as const

export type Permission = (typeof PERMISSIONS)[number]

/**
 * What a route declares in its config: the permission a sub-user needs, or `any` for routes every
 * authenticated user may call (tools), or `public` for routes without an API key (the OpenAPI document).
 */
export type RouteArea = Permission | 'any' | 'public'

export type PermissionMap = Record<string, boolean>

const KNOWN: ReadonlySet<string> = new Set(PERMISSIONS)

/** True for a name of the specification's list (and nothing inherited: `__proto__`, `constructor`, … are not). */
export const isPermission = (name: string): name is Permission => KNOWN.has(name)

/**
 * A permission map with every known name set to `value`, then the known names of `overrides` on top. Only own
 * properties with known names are read, and the result is built from the known list: unknown names, `__proto__`
 * and `constructor` are dropped, and nothing is ever assigned to a prototype.
 */
export function permissionMap(value: boolean, overrides: PermissionMap = {}): PermissionMap {
  const map: PermissionMap = {}
  for (const p of PERMISSIONS) {
    const given = Object.hasOwn(overrides, p) ? overrides[p] : undefined
    map[p] = typeof given === 'boolean' ? given : value
  }
  return map
}

/** A stored permission map (JSON text) read safely: known names only, a missing or non-boolean value false. */
export function parsePermissions(text: string): PermissionMap {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = {}
  }
  const given = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as PermissionMap) : {}
  const map = permissionMap(false, given)
  for (const p of PERMISSIONS) map[p] = map[p] === true
  return map
}
