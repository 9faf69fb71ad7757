import type { Context } from '../context.js'
import { errors } from '../errors.js'
import type { SandboxReset } from '../ops/sandbox.js'
import { countAccounts } from '../modules/iam/iam.repository.js'
import { wipeAccountData } from '../modules/admin/sandbox.repository.js'
import { keepDemoKeys, seedDemoIfEmpty } from './demo.js'
import { applySeed, readSeedFile } from './seed-file.js'

/**
 * Restores the seed: deletes all account data, then loads the seed file (or the demo data when there is
 * no seed file and the demo is on). Also puts the clock back to real time and clears faults and the journal.
 * The seed file is read again, so edits to it apply without a restart.
 */
export async function resetSandbox(ctx: Context): Promise<SandboxReset> {
  const sandbox = ctx.ops.sandbox
  if (!sandbox) throw errors.endpointNotFound()
  const file = ctx.config.sandbox.seedFile
  const spec = file ? await readSeedFile(file, ctx.services.domains.names) : null
  await wipeAccountData(ctx.db, ctx.dialect)
  ctx.services.iam.invalidateAuthCache()
  sandbox.clock.advance(-sandbox.clock.offset())
  sandbox.faults.clear()
  sandbox.journal.clear()
  if (file && spec) return { accounts: await applySeed(ctx, spec, file), seed: 'file', demo_key: null }
  if (ctx.config.demo.enabled) {
    const seeded = await seedDemoIfEmpty(ctx)
    // A later start shows the demo keys from these files (see startServer).
    if (seeded) keepDemoKeys(ctx.config, seeded)
    return { accounts: await countAccounts(ctx.db), seed: 'demo', demo_key: seeded?.key ?? null }
  }
  return { accounts: 0, seed: 'empty', demo_key: null }
}
