import { Type } from 'typebox'

/** An error answer in the OpenAPI document: the shared error body, described by the texts the route can answer. */
export const ErrorAnswer = (texts: string[], note = '') =>
  Type.Unsafe<{ status: number; status_description: string }>({
    $ref: 'ErrorBody',
    description: texts.map((t) => `\`${t}\``).join(', ') + note,
  })

/**
 * The error answers of an account or affiliate route: the ones every route gives (bad input, the 401s,
 * the permission check, the rate limit) plus the route's own texts by status.
 */
export function errorsFor(area: string, own: { 400?: string[]; 403?: string[]; 404?: string[]; 429?: string[] } = {}) {
  return {
    400: ErrorAnswer(['Wrong request method', 'SSL connection is required', ...(own[400] ?? [])], '; validation errors name the field (`Missing <field>`, `Invalid <field>: …`) and list every problem in `errors`'),
    401: ErrorAnswer(['No valid API key set', 'API key has expired', 'Remote IP address is not found in the API key whitelist (<ip>)']),
    403: ErrorAnswer(['Access denied'], `: a sub-user without the \`${area}\` permission${own[403] ? `; ${own[403].map((t) => `\`${t}\``).join(', ')}` : ''}`),
    ...(own[404] ? { 404: ErrorAnswer(own[404]) } : {}),
    429: ErrorAnswer(['Rate limit exceeded', ...(own[429] ?? [])]),
  }
}

/** The extra 400 of paged lists. */
export const PAGED = [`Page out of range`]
