import { Type } from 'typebox'

/** `?test=1` on a mutating call: full validation and the normal response, but nothing is stored or sent. */
export const DryRunQuery = Type.Object({
  test: Type.Optional(Type.String({ pattern: '^(1|0|true|false)$', description: 'Dry run: `1` validates and answers as usual without storing or sending anything' })),
})

/** True when the query asks for a dry run. */
export const isDryRun = (query: { test?: string } | undefined): boolean => query?.test === '1' || query?.test === 'true'

/** The `{ dryRun }` option a service takes, read from a request whose query may ask for a dry run. */
export const dryRunOf = (req: { query: { test?: string } | undefined }): { dryRun: boolean } =>
  ({ dryRun: isDryRun(req.query) })
