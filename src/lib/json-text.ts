/**
 * JSON text built elsewhere (by the database) and sent as it is: a string known to hold one JSON value, written
 * as JSON.stringify writes it (no spaces, keys in the order of the answer's schema).
 */
export type JsonText = string & { readonly __jsonText: true }

/** Marks `text` as one JSON value; the caller vouches for it (a query that builds it, see src/db/json-text.ts). */
export const asJsonText = (text: string): JsonText => text as JsonText

/** `{"key":value,…}` from values that are JSON text already, in the order given. */
export function jsonObjectOf(fields: [key: string, value: JsonText][]): JsonText {
  return asJsonText(`{${fields.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`)
}

/** Any value the answer's schema allows, as JSON.stringify writes it (for the small parts built in code). */
export const jsonTextOf = (value: unknown): JsonText => asJsonText(JSON.stringify(value))
