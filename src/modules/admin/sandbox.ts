import fs from 'node:fs'
import path from 'node:path'
import type { Context, Sandbox } from '../../context.js'
import { iso } from '../../clock.js'
import { errors } from '../../errors.js'
import { countAccounts } from '../iam/iam.repository.js'
import { seedDemoIfEmpty } from '../../seed/demo.js'
import { applySeed, readSeedFile } from './seed-file.js'
import { wipeAccountData } from './sandbox.repository.js'

/** Loads HOSTAPI_SEED_FILE when the database has no account yet; returns the number of accounts created. */
export async function seedFileIfEmpty(ctx: Context): Promise<number> {
  const file = ctx.config.sandbox.seedFile
  if (!file) return 0
  const spec = await readSeedFile(file, ctx.services.domains.names)
  if ((await countAccounts(ctx.db)) > 0) return 0
  return applySeed(ctx, spec, file)
}

/** The sandbox of the context, or 404 `Endpoint not found` when sandbox mode is off. */
export function sandboxOf(ctx: Context): Sandbox {
  if (!ctx.ops.sandbox) throw errors.endpointNotFound()
  return ctx.ops.sandbox
}

/**
 * Restores the seed: deletes all account data, then loads the seed file (or the demo data when there is
 * no seed file and the demo is on). Also puts the clock back to real time and clears faults and the journal.
 * The seed file is read again, so edits to it apply without a restart.
 */
export async function resetSandbox(ctx: Context): Promise<{ accounts: number; seed: 'file' | 'demo' | 'empty'; demo_key: string | null }> {
  const sandbox = sandboxOf(ctx)
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
    if (seeded && !ctx.config.demo.key) {
      // A later start shows the demo key from this file (see startServer).
      fs.mkdirSync(ctx.config.dataDir, { recursive: true })
      const keyFile = path.join(ctx.config.dataDir, 'demo-api-key')
      fs.writeFileSync(keyFile, seeded.key + '\n', { mode: 0o600 })
      fs.chmodSync(keyFile, 0o600)
    }
    return { accounts: await countAccounts(ctx.db), seed: 'demo', demo_key: seeded?.key ?? null }
  }
  return { accounts: 0, seed: 'empty', demo_key: null }
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }

/** `30d`, `12h`, `15m`, `45s`, `2w` (a leading `-` goes back) in milliseconds; throws a 400 otherwise. */
export function parseDuration(text: string): number {
  const m = /^(-?)(\d{1,7})\s*([smhdw])$/.exec(text.trim())
  if (!m) throw errors.adminInvalidDuration()
  return (m[1] ? -1 : 1) * Number(m[2]) * UNITS[m[3]]
}

/** Moves the sandbox clock (by `advance`, or to `to`), then runs the jobs that became due. */
export async function moveClock(ctx: Context, input: { advance?: string; to?: string }) {
  const { clock } = sandboxOf(ctx)
  if (input.advance !== undefined) clock.advance(parseDuration(input.advance))
  if (input.to !== undefined) {
    const target = new Date(/^\d{4}-\d{2}-\d{2}$/.test(input.to) ? `${input.to}T00:00:00Z` : input.to)
    if (Number.isNaN(target.getTime())) throw errors.adminInvalidTime('to')
    clock.advance(target.getTime() - clock.now().getTime())
  }
  const jobsRun = input.advance !== undefined || input.to !== undefined ? await ctx.jobs.drain() : 0
  return clockState(ctx, jobsRun)
}

export function clockState(ctx: Context, jobsRun = 0) {
  const { clock } = sandboxOf(ctx)
  return { now: iso(clock.now()), offset_seconds: Math.round(clock.offset() / 1000), jobs_run: jobsRun }
}
