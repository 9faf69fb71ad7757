import fs from 'node:fs'
import path from 'node:path'
import type { Config } from '../config/config.js'
import type { Context } from '../context.types.js'
import * as iam from '../modules/iam/iam.repository.js'
import { hashApiKey } from '../modules/iam/keys.js'
import { findTokenByHash } from '../modules/admin/admin.repository.js'
import { seedCertificates } from '../modules/certificates/certificates.seed.js'
import { seedVps } from '../modules/vps/vps.seed.js'
import { seedAccount } from '../modules/account/account.seed.js'
import { seedDomains } from '../modules/domains/domains.seed.js'

import type { DemoSeeder } from './demo-seeder.js'
export type { DemoSeeder } from './demo-seeder.js'

/** Each area's demo seeder, run in this order on an empty database. */
const demoSeeders: DemoSeeder[] = [seedDomains, seedCertificates, seedVps, seedAccount]

/** Runs every area's demo seeder for one account (a seed-file account with `demo_data: true`). */
export async function seedDemoData(
  ctx: Context,
  account: { accountId: number; userId: number; customerNumber: number },
): Promise<void> {
  for (const seed of demoSeeders) await seed(ctx, account)
}

export const DEMO_EMAIL = 'demo@example.com'

/**
 * Seeds the demo account when the database has no account yet: a main user with an API key, and a
 * sub-user with limited permissions and a key of its own. Returns the demo key, or null when nothing was seeded.
 */
export async function seedDemoIfEmpty(
  ctx: Context,
): Promise<{ key: string; subUserKey: string; customerNumber: number } | null> {
  if ((await iam.countAccounts(ctx.db)) > 0) return null
  const { iam: service } = ctx.services
  const account = await service.createAccount({
    name: 'Demo B.V.',
    email: DEMO_EMAIL,
    firstname: 'Demo',
    lastname: 'User',
  })
  const main = await service.createKey(account.accountId, account.userId, {
    label: 'demo',
    ...(ctx.config.demo.key ? { key: ctx.config.demo.key } : {}),
  })
  const subUserId = await service.createSubUser(account.accountId, {
    email: 'dns-only@example.com',
    firstname: 'Dana',
    lastname: 'Records',
    permissions: { domains: true },
  })
  const sub = await service.createKey(account.accountId, subUserId, { label: 'demo sub-user (domains only)' })
  for (const seed of demoSeeders) await seed(ctx, account)
  return { key: main.key, subUserKey: sub.key, customerNumber: account.customerNumber }
}

/** The file in the data directory that keeps a generated demo key, so a later start can show it again. */
export const demoKeyFile = (config: Config): string => path.join(config.dataDir, 'demo-api-key')

/** The file in the data directory that keeps the demo sub-user's key, so a later start can show it again. */
export const demoSubUserKeyFile = (config: Config): string => path.join(config.dataDir, 'demo-subuser-api-key')

/** Writes the keys of a demo account just seeded to their files (a fixed HOSTAPI_DEMO_KEY is not), owner-only. */
export function keepDemoKeys(config: Config, seeded: { key: string; subUserKey: string }): void {
  fs.mkdirSync(config.dataDir, { recursive: true })
  if (!config.demo.key) writeOwnerOnly(demoKeyFile(config), seeded.key)
  writeOwnerOnly(demoSubUserKeyFile(config), seeded.subUserKey)
}

/** The file in the data directory that keeps the demo admin token, so a later start can show it again. */
export const demoAdminTokenFile = (config: Config): string => path.join(config.dataDir, 'demo-admin-token')

/**
 * The admin token of demo mode, so a test suite can drive the admin and sandbox API without a CLI step: the one kept
 * in the data directory while the database knows it and it is not revoked; a new one (kept in its file) when the
 * database does not know it; null once it was revoked (the operator chose so; `admin token create` makes another).
 */
export async function demoAdminToken(ctx: Context): Promise<string | null> {
  const file = demoAdminTokenFile(ctx.config)
  const kept = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : ''
  if (kept) {
    const row = await findTokenByHash(ctx.db, hashApiKey(kept))
    if (row) return row.revoked_at === null ? kept : null
  }
  const { token } = await ctx.services.admin.createToken('demo')
  fs.mkdirSync(ctx.config.dataDir, { recursive: true })
  writeOwnerOnly(file, token)
  return token
}

function writeOwnerOnly(file: string, key: string): void {
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600 })
  fs.chmodSync(file, 0o600)
}
