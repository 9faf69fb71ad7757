import { Type, type TSchema } from 'typebox'
import { DEFAULT_LIMIT, MAX_LIMIT } from '../lib/paging.js'

export { DEFAULT_LIMIT, MAX_LIMIT, MAX_PAGE, pageOf, pagination, type Page } from '../lib/paging.js'

/** Shared schemas of the API: the envelope, the error body and pagination. */

export const ErrorBody = Type.Object(
  {
    status: Type.Integer({ description: 'The HTTP status code, as an integer' }),
    status_description: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { $id: 'ErrorBody', description: 'Every error response' },
)

/** `{status, status_description, data}` around `data`. */
export const Envelope = <T extends TSchema>(data: T, example?: unknown) =>
  Type.Object(
    {
      status: Type.Integer({ examples: [200] }),
      status_description: Type.String({ examples: ['Request successful'] }),
      data,
    },
    example === undefined
      ? {}
      : { examples: [{ status: 200, status_description: 'Request successful', data: example }] },
  )

/** An envelope without `data`, for mutations that only report success. */
export const OkMessage = Type.Object({
  status: Type.Integer({ examples: [200] }),
  status_description: Type.String({ examples: ['Request successful'] }),
})

export const Pagination = Type.Object(
  { page: Type.Integer(), limit: Type.Integer(), total: Type.Integer(), total_pages: Type.Integer() },
  { $id: 'Pagination' },
)

/** `page`, `limit`, `search` of every paged list. */
export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, from 1' })),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `Items per page, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT})`,
    }),
  ),
  search: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive substring' })),
}

export const REQUEST_SUCCESSFUL = 'Request successful'

/** The success envelope. */
export function ok<T>(data: T, text = REQUEST_SUCCESSFUL) {
  return { status: 200, status_description: text, data }
}

/** A success envelope without data. */
export function okMessage(text = REQUEST_SUCCESSFUL) {
  return { status: 200, status_description: text }
}

/** Schemas shown with an `enum` in the OpenAPI documents while validation keeps them as they are. */
const documentedEnums = new WeakMap<object, readonly string[]>()

/**
 * `schema` as it validates, shown in the OpenAPI documents with `enum: values`: for an input the service reads
 * more leniently than the enum says (DNS record types in any case, refused with the specification's own text).
 */
export function documentedEnum<T extends TSchema>(schema: T, values: readonly string[]): T {
  documentedEnums.set(schema, values)
  return schema
}

/** A copy of `schema` with the enums documentedEnum declared put in (the route's own schema is left as it is). */
export function withDocumentedEnums<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(withDocumentedEnums) as T
  if (schema === null || typeof schema !== 'object') return schema
  const values = documentedEnums.get(schema)
  // Enumerable keys only: TypeBox's own markers (`~kind`) are not part of the schema.
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) copy[key] = withDocumentedEnums(value)
  if (values) copy.enum = [...values]
  return copy as T
}
