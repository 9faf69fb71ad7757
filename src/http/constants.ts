/** The base path of the customer API. */
export const API_PREFIX = '/api/v2'
