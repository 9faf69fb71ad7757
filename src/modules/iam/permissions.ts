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

/** A permission map with every known name set to `value`, then `overrides` on top (unknown names kept). */
export function permissionMap(value: boolean, overrides: PermissionMap = {}): PermissionMap {
  const map: PermissionMap = {}
  for (const p of PERMISSIONS) map[p] = value
  return { ...map, ...overrides }
}
