import { errors } from '../errors.js'

/** True when JSON text has a string with NUL in it: `\u0000` with its backslash not itself escaped. */
const hasNul = (json: string) => json.includes('\\u0000') && /(?:^|[^\\])(?:\\\\)*\\u0000/.test(json)

/**
 * A request body as the API reads it: JSON whatever the Content-Type, `undefined` when empty; 400
 * `Invalid JSON body` when it does not parse, and 400 for a NUL in any string (no text the API keeps or looks
 * up holds NUL: PostgreSQL cannot store it).
 */
export function parseJsonBody(raw: string): unknown {
  const text = raw.trim()
  if (text === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw errors.invalidJson()
  }
  if (hasNul(text)) throw errors.nulInBody()
  return parsed
}
