import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'

/** The committed OpenAPI document the client is generated from. */
export const openapiFile = new URL('../../../openapi.json', import.meta.url)

/** The client's generated types file. */
export const schemaFile = new URL('../src/schema.d.ts', import.meta.url)

/** The text of `src/schema.d.ts` for the committed `openapi.json`, as the openapi-typescript CLI writes it. */
export async function generateSchema(source: URL = openapiFile): Promise<string> {
  return `${COMMENT_HEADER}${astToString(await openapiTS(source))}`
}
