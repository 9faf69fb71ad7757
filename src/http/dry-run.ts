import { Type } from 'typebox'
import type { DryRun } from '../lib/dry-run.js'

/** `?test=1` on a mutating call: full validation and the normal response, but nothing is stored or sent. */
export const DryRunQuery = Type.Object({
  test: Type.Optional(
    Type.String({
      pattern: '^(1|0|true|false)$',
      description: 'Dry run: `1` validates and answers as usual without storing or sending anything',
    }),
  ),
})

/** The service option of a request: a dry run when its query says `test=1` or `test=true`. */
export const dry = (req: { query: unknown }): DryRun => {
  const test = (req.query as { test?: string } | undefined)?.test
  return { dryRun: test === '1' || test === 'true' }
}
