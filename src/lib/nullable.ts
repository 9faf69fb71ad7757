import { Type, type Static, type TSchema } from 'typebox'

/**
 * `schema` or null, as one JSON-schema type list (`type: ['string', 'null']`). A union (`anyOf`) would let the
 * validator coerce null into the first branch (`""`, `0`) before trying the null branch.
 */
export function Nullable<T extends TSchema & { type: string }>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })
}
