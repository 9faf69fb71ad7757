/** The base path of the customer API. */
export const API_PREFIX = '/api/v2'
/** The base path of the admin API. */
export const ADMIN_PREFIX = '/admin/v1'
/**
 * The longest path parameter the router takes: a full domain name (253 characters, 254 with the root dot).
 * A longer segment is answered `414 URI too long`.
 */
export const MAX_PARAM_LENGTH = 254
