import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'

/** The committed OpenAPI documents the client is generated from: the customer API's and the admin API's. */
export const openapiFile = new URL('../../../openapi.json', import.meta.url)
export const adminOpenapiFile = new URL('../../../openapi-admin.json', import.meta.url)

/** The client's generated types files (`.ts`, so that the build emits their declarations into `dist`). */
export const schemaFile = new URL('../src/schema.ts', import.meta.url)
export const adminSchemaFile = new URL('../src/admin-schema.ts', import.meta.url)

/** Each generated file with the document it is generated from. */
export const generatedFiles = [
  { file: schemaFile, source: openapiFile },
  { file: adminSchemaFile, source: adminOpenapiFile },
]

/** The text of a types file for an OpenAPI document, as the openapi-typescript CLI writes it. */
export async function generateSchema(source: URL = openapiFile): Promise<string> {
  return `${COMMENT_HEADER}${astToString(await openapiTS(source))}`
}
