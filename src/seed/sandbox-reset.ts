import type { Context } from '../context.types.js'
import { errors } from '../errors.js'
import type { SandboxReset } from '../ops/sandbox.js'
import { countAccounts } from '../modules/iam/iam.repository.js'
import { wipeAccountData } from '../modules/admin/sandbox.repository.js'
import { SeedFileSchema } from '../modules/admin/seed.schemas.js'
import { keepDemoKeys, seedDemoIfEmpty } from './demo.js'
import { applySeed, readSeedFile, SeedFileError, seedProblems, type SeedSpec } from './seed-file.js'

/**
 * Restores the seed: deletes all account data, then loads the seed document given (a reset's body, in the seed
 * file's format), else the seed file, else the demo data when the demo is on. Also puts the clock back to real time
 * and clears faults and the journal. The seed file is read again, so edits to it apply without a restart.
 * A seed document that is not valid is refused (400) before anything is deleted.
 */
export async function resetSandbox(ctx: Context, document?: unknown): Promise<SandboxReset> {
  const sandbox = ctx.ops.sandbox
  if (!sandbox) throw errors.endpointNotFound()
  const given = document === undefined || document === null ? null : await checkedDocument(ctx, document)
  const file = ctx.config.sandbox.seedFile
  const spec = !given && file ? await readSeedFile(file, ctx.services.domains.names) : null
  await wipeAccountData(ctx.db, ctx.dialect)
  ctx.services.iam.invalidateAuthCache()
  sandbox.clock.advance(-sandbox.clock.offset())
  sandbox.faults.clear()
  sandbox.journal.clear()
  if (given) {
    try {
      return { accounts: await applySeed(ctx, given, 'the seed document'), seed: 'document', demo_key: null }
    } catch (err) {
      // A rule the data breaks (a DNS record the API refuses): the accounts before it stay, the rest is not loaded.
      if (err instanceof SeedFileError) throw errors.adminInvalidSeed(err.problems)
      throw err
    }
  }
  if (file && spec) return { accounts: await applySeed(ctx, spec, file), seed: 'file', demo_key: null }
  if (ctx.config.demo.enabled) {
    const seeded = await seedDemoIfEmpty(ctx)
    // A later start shows the demo keys from these files (see startServer).
    if (seeded) keepDemoKeys(ctx.config, seeded)
    return { accounts: await countAccounts(ctx.db), seed: 'demo', demo_key: seeded?.key ?? null }
  }
  return { accounts: 0, seed: 'empty', demo_key: null }
}

/** A seed document checked as a seed file is (schema, then names and keys), or a 400 listing the problems. */
async function checkedDocument(ctx: Context, document: unknown): Promise<SeedSpec> {
  const { Value } = await import('typebox/value')
  if (!Value.Check(SeedFileSchema, document))
    throw errors.adminInvalidSeed(
      [...Value.Errors(SeedFileSchema, document)].slice(0, 20).map((e) => `${e.instancePath || '/'}: ${e.message}`),
    )
  const problems = seedProblems(document, ctx.services.domains.names)
  if (problems.length) throw errors.adminInvalidSeed(problems)
  return document
}
