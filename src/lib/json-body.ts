import { errors } from '../errors.js'

/** True when JSON text has a string with NUL in it: `\u0000` with its backslash not itself escaped. */
const hasNul = (json: string) => json.includes('\\u0000') && /(?:^|[^\\])(?:\\\\)*\\u0000/.test(json)

/** The limits a JSON body is read within, checked before it is parsed. */
export interface JsonLimits {
  /** The deepest nesting of arrays and objects (HOSTAPI_JSON_MAX_DEPTH): deeper answers 400. */
  maxDepth: number
  /** The most values (array elements, object members, containers) the body may hold: more answers 413. */
  maxValues?: number
}

/**
 * The most values a body over the general body limit may hold. Only a zone import takes such bodies, and its body is
 * one large string: a body of many values would cost the event loop its structured clone back from the worker
 * (half a second for 500,000 keys), so it is refused 413 by the worker before it is parsed.
 */
export const LARGE_BODY_MAX_VALUES = 1000

/** What jsonShape reads of a JSON text. */
export interface JsonShape {
  /** The deepest nesting of arrays and objects: 0 for a scalar, 1 for `[]` or `{"a":1}`. */
  depth: number
  /** Containers plus commas outside strings: at least the number of values nested in the text, less one. */
  values: number
}

const QUOTE = 34
const BACKSLASH = 92

/**
 * The nesting depth of JSON text and a count of its values, in one linear pass that reads brackets and commas
 * outside strings (escapes understood), without parsing; it stops as soon as the depth passes `stopDepth`.
 * On text that is not JSON the figures mean nothing (JSON.parse refuses that text anyway).
 */
export function jsonShape(text: string, stopDepth = Number.POSITIVE_INFINITY): JsonShape {
  let depth = 0
  let max = 0
  let values = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // To the closing quote: the next one not escaped by an odd run of backslashes (long strings cost no loop).
      for (;;) {
        const q = text.indexOf('"', i + 1)
        if (q < 0) return { depth: max, values }
        let b = q - 1
        while (text.charCodeAt(b) === BACKSLASH) b--
        i = q
        if ((q - 1 - b) % 2 === 0) break
      }
    } else if (c === 123 || c === 91) {
      values++
      if (++depth > max) {
        max = depth
        if (max > stopDepth) return { depth: max, values }
      }
    } else if (c === 125 || c === 93) depth--
    else if (c === 44) values++
  }
  return { depth: max, values }
}

/**
 * True when the text has at most `max` opening brackets and commas anywhere (strings included): neither its nesting
 * nor its count of values can pass `max`, so an ordinary small body needs no scan.
 */
function fewBrackets(text: string, max: number): boolean {
  let count = 0
  for (const open of ['{', '[', ',']) {
    for (let i = text.indexOf(open); i >= 0; i = text.indexOf(open, i + 1)) if (++count > max) return false
  }
  return true
}

/**
 * A request body as the API reads it: JSON whatever the Content-Type, `undefined` when empty; 400
 * `Invalid JSON body` when it does not parse, 400 when it nests deeper than `limits.maxDepth` and 413 when it holds
 * more than `limits.maxValues` values (both checked before JSON.parse runs), and 400 for a NUL in any string
 * (no text the API keeps or looks up holds NUL: PostgreSQL cannot store it).
 */
export function parseJsonBody(raw: string, limits: JsonLimits): unknown {
  const text = raw.trim()
  if (text === '') return undefined
  if (!fewBrackets(text, Math.min(limits.maxDepth, limits.maxValues ?? Number.POSITIVE_INFINITY))) {
    const shape = jsonShape(text, limits.maxDepth)
    if (shape.depth > limits.maxDepth) throw errors.jsonTooDeep(limits.maxDepth)
    if (limits.maxValues !== undefined && shape.values >= limits.maxValues) throw errors.bodyTooLarge()
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw errors.invalidJson()
  }
  if (hasNul(text)) throw errors.nulInBody()
  return parsed
}
