import fs from 'node:fs'
import type { Static } from 'typebox'
import type { Context } from '../context.types.js'
import { ymd } from '../clock.js'
import { ApiError } from '../errors.js'
import { DomainNames } from '../lib/domain-name.js'
import { permissionsOf, parseTime } from '../modules/admin/admin-input.js'
import { setAccountStatus } from '../modules/admin/admin.repository.js'
import { countAccounts } from '../modules/iam/iam.repository.js'
import { seedDemoData } from './demo.js'
import { SeedFileSchema, type SeedDomain, type SeedKey } from '../modules/admin/seed.schemas.js'

export type SeedSpec = Static<typeof SeedFileSchema>

/** A seed file that cannot be read or does not describe valid data; lists every problem found. */
export class SeedFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`Invalid seed file ${file}:\n  - ${problems.join('\n  - ')}`)
  }
}

/** Reads and validates a seed file (the YAML parser and TypeBox's value checker load with the first one). */
export async function readSeedFile(file: string, names: DomainNames = new DomainNames()): Promise<SeedSpec> {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw new SeedFileError(file, [`cannot read it: ${(err as Error).message}`])
  }
  let data: unknown
  try {
    data = file.toLowerCase().endsWith('.json') ? JSON.parse(text) : (await import('yaml')).default.parse(text)
  } catch (err) {
    throw new SeedFileError(file, [`cannot parse it: ${(err as Error).message}`])
  }
  const { Value } = await import('typebox/value')
  if (!Value.Check(SeedFileSchema, data)) {
    const problems = [...Value.Errors(SeedFileSchema, data)]
      .slice(0, 20)
      .map((e) => `${e.instancePath || '/'}: ${e.message}`)
    throw new SeedFileError(file, problems)
  }
  const problems = seedProblems(data, names)
  if (problems.length) throw new SeedFileError(file, problems)
  return data
}

/**
 * What the schema cannot say of a seed document: keys, domains and an account's e-mail addresses listed twice,
 * invalid names, two demo accounts.
 */
export function seedProblems(data: SeedSpec, names: DomainNames): string[] {
  const problems: string[] = []
  const keys = new Set<string>()
  const domains = new Set<string>()
  data.accounts.forEach((a, i) => {
    const emails = [a.email, ...(a.users ?? []).map((u) => u.email)].map((e) => e.toLowerCase())
    for (const e of new Set(emails.filter((e, n) => emails.indexOf(e) !== n)))
      problems.push(`/accounts/${i}: the e-mail address ${e} is listed twice`)
    const allKeys = [...(a.keys ?? []), ...(a.users ?? []).flatMap((u) => u.keys ?? [])]
    for (const k of allKeys) {
      if (keys.has(k.key)) problems.push(`/accounts/${i}: the key ${k.key.slice(0, 8)}… is listed twice`)
      keys.add(k.key)
    }
    ;(a.domains ?? []).forEach((d, j) => {
      const name = names.registrable(d.name)
      if (!name)
        problems.push(
          `/accounts/${i}/domains/${j}: invalid domain name ${d.name} (a registrable name is one label below a public suffix)`,
        )
      else if (domains.has(name)) problems.push(`/accounts/${i}/domains/${j}: ${name} is listed twice`)
      else domains.add(name)
    })
  })
  if (data.accounts.filter((a) => a.demo_data).length > 1)
    problems.push('demo_data: at most one account can have the demo data')
  return problems
}

/** Loads HOSTAPI_SEED_FILE when the database has no account yet; returns the number of accounts created. */
export async function seedFileIfEmpty(ctx: Context): Promise<number> {
  const file = ctx.config.sandbox.seedFile
  if (!file) return 0
  const spec = await readSeedFile(file, ctx.services.domains.names)
  if ((await countAccounts(ctx.db)) > 0) return 0
  return applySeed(ctx, spec, file)
}

/** Creates what the seed describes; returns the number of accounts created. A rule broken by the data (a bad record) throws. */
export async function applySeed(ctx: Context, spec: SeedSpec, file: string): Promise<number> {
  const { iam } = ctx.services
  try {
    for (const [i, a] of spec.accounts.entries()) {
      const where = `/accounts/${i}`
      const account = await iam.createAccount({
        name: a.name,
        email: a.email,
        firstname: a.firstname ?? '',
        lastname: a.lastname ?? '',
      })
      for (const k of a.keys ?? []) await createKey(ctx, account.accountId, account.userId, k)
      for (const u of a.users ?? []) {
        const userId = await iam.createSubUser(account.accountId, {
          email: u.email,
          firstname: u.firstname ?? '',
          lastname: u.lastname ?? '',
          permissions: permissionsOf(u.permissions),
        })
        for (const k of u.keys ?? []) await createKey(ctx, account.accountId, userId, k)
      }
      for (const [j, d] of (a.domains ?? []).entries()) {
        const name = ctx.services.domains.names.registrable(d.name)
        if (!name) throw new SeedFileError(file, [`${where}/domains/${j}: invalid domain name ${d.name}`])
        try {
          await seedDomain(ctx, account.accountId, name, d)
        } catch (err) {
          if (err instanceof ApiError)
            throw new SeedFileError(file, [`${where}/domains/${j} (${name}): ${err.message}`])
          throw err
        }
      }
      if (a.demo_data) await seedDemoData(ctx, account)
      if (a.status === 'suspended') {
        await setAccountStatus(ctx.db, account.accountId, 'suspended')
        iam.invalidateAuthCache()
      }
    }
  } catch (err) {
    if (err instanceof ApiError) throw new SeedFileError(file, [err.message])
    throw err
  }
  return spec.accounts.length
}

/**
 * A domain as an order would leave it (registered with the registry, the provider's nameservers, its renewal
 * queued for its renewal date), then its tags, lock and records set through the domains and DNS services, so the
 * seed obeys the API's rules.
 */
async function seedDomain(ctx: Context, accountId: number, name: string, d: Static<typeof SeedDomain>) {
  const { domains, dns } = ctx.services
  const now = ctx.clock.now()
  const nextYear = new Date(now)
  nextYear.setUTCFullYear(nextYear.getUTCFullYear() + 1)
  // A domain with a renewal date of its own is not registered now: the registry's expiry (a year from now) would
  // differ from it, and a renewal continues from the registry's. The registry takes the name up with the domain's
  // date when it first hears of it (as for demo data); the name is taken meanwhile, as every domain's is.
  // A name the registry cannot register (taken elsewhere) is still seeded; the registry just does not know it.
  const registered = d.renewal_date ? null : await ctx.drivers.registry.register(name, 1)
  const renewalDate = d.renewal_date ?? (registered?.ok ? registered.expiresOn : ymd(nextYear))
  // Renewed on its renewal date as an ordered domain is: the job is queued in the transaction that creates it.
  await ctx.db.transaction().execute(async (trx) => {
    const domainId = await domains.create(trx, {
      accountId,
      name,
      renewalDate,
      nameserverProfile: 'default-mijnhost',
      nameservers: ctx.config.defaultNameservers.map((hostname) => ({ hostname, ipv4: '', ipv6: '' })),
      contacts: {},
    })
    await ctx.services.domainOrders.scheduleRenewal(trx, accountId, domainId, renewalDate)
  })
  await domains.update(accountId, name, { tags: d.tags ?? [], is_locked: d.is_locked ?? false })
  if (d.records?.length) await dns.replace(accountId, name, d.records)
}

async function createKey(ctx: Context, accountId: number, userId: number, k: Static<typeof SeedKey>) {
  await ctx.services.iam.createKey(accountId, userId, {
    key: k.key,
    label: k.label ?? 'seed',
    allowedIps: k.allowed_ips ?? [],
    expiresAt: k.expires_at ? parseTime(k.expires_at, 'expires_at') : null,
  })
}
