/** The base path of the customer API. */
export const API_PREFIX = '/api/v2'
/** The base path of the admin API. */
export const ADMIN_PREFIX = '/admin/v1'
