import { errors } from '../../errors.js'
import { isPermission, permissionMap, type PermissionMap } from '../iam/permissions.js'

/** The paging of an admin list: page number and page size. */
export interface PageInput {
  page?: number
  limit?: number
}

/** Parses `YYYY-MM-DD` (midnight UTC) or an ISO 8601 time; throws a 400 naming `field`. */
export function parseTime(text: string, field: string): Date {
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text)
  if (Number.isNaN(d.getTime())) throw errors.adminInvalidTime(field)
  return d
}

/** Permissions as a list of names or as a map; a name outside the specification's list is a 400. */
export function permissionsOf(input: string[] | PermissionMap | undefined): PermissionMap {
  if (!input) return {}
  const entries: [string, boolean][] = Array.isArray(input) ? input.map((p) => [p, true]) : Object.entries(input)
  for (const [name] of entries) if (!isPermission(name)) throw errors.unknownPermission(name)
  return permissionMap(false, Object.fromEntries(entries))
}
