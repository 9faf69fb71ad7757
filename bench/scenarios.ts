// What `npm run bench` measures, and the data it needs, seeded through the project's own services
// before the server starts.
import { sql, type Kysely } from 'kysely'
import { loadConfig } from '../src/config/config.js'
import { createContext } from '../src/context.js'
import { migrate } from '../src/db/migrate.js'
import type { DB } from '../src/db/tables.js'
import { seedDemoIfEmpty } from '../src/seed/demo.js'

export const DEMO_KEY = 'benchmarkBenchmarkBenchmark0001'

export interface Scenario {
  name: string
  method: string
  /** Relative to /api/v2. */
  path: string
  body?: string
}

export interface BenchData {
  customerNumber: number
  /** A domain with 200 records. */
  bigZone: string
  /** A VPS of the demo account, with backups. */
  vpsId: number
}

export const DOMAINS = 100
export const RECORDS = 200
export const TICKETS = 30

/** Seeds the demo account (with the benchmark key) and what the scenarios read. */
export async function seedBenchmarkData(env: NodeJS.ProcessEnv, schema: string | null): Promise<BenchData> {
  const config = loadConfig({ ...env, HOSTAPI_JOBS: '0' })
  if (schema && config.database.dialect === 'postgres') {
    const pg = await import('pg')
    const client = new pg.default.Client({ connectionString: config.database.url })
    await client.connect()
    await client.query(`drop schema if exists ${schema} cascade`)
    await client.query(`create schema ${schema}`)
    await client.end()
  }
  const ctx = createContext(config)
  try {
    await migrate(ctx.db, ctx.dbSchema)
    const seeded = await seedDemoIfEmpty(ctx)
    if (!seeded) throw new Error('the benchmark needs an empty database')
    const who = await ctx.services.iam.authenticate(DEMO_KEY, '127.0.0.1')
    const { domains, dns, tickets } = ctx.services
    const existing = (JSON.parse(await domains.list(who.accountId, {})) as { domains: unknown[] }).domains.length
    const renewalDate = `${ctx.clock.now().getUTCFullYear() + 1}-01-01`
    let bigZone = ''
    for (let i = existing; i < DOMAINS; i++) {
      const name = `bench-${String(i).padStart(3, '0')}.nl`
      await domains.create(ctx.db, {
        accountId: who.accountId,
        name,
        renewalDate,
        nameserverProfile: null,
        nameservers: [],
        contacts: {},
      })
      await dns.replace(who.accountId, name, [
        { type: 'A', name: '', value: '192.0.2.1' },
        { type: 'A', name: 'www', value: '192.0.2.1' },
      ])
      bigZone ||= name
    }
    const records = Array.from({ length: RECORDS }, (_, i) =>
      i % 2
        ? { type: 'A', name: `host${i}`, value: `192.0.2.${i % 250}`, ttl: 3600 }
        : { type: 'TXT', name: `txt${i}`, value: `record ${i}`, ttl: 3600 },
    )
    await dns.replace(who.accountId, bigZone, records)
    for (let i = 0; i < TICKETS; i++)
      await tickets.create(who, { subject: `Benchmark ticket ${i}`, message: '<p>Hello</p>', department: 'support' })
    const { vps } = JSON.parse(await ctx.services.vps.list(who.accountId)) as { vps: { id: number }[] }
    if (!vps.length) throw new Error('the demo data has no VPS')
    await settle(ctx.db, config.database.dialect)
    return { customerNumber: seeded.customerNumber, bigZone, vpsId: vps[0].id }
  } finally {
    await ctx.close()
  }
}

/**
 * Statistics for the planner, and on PostgreSQL the tables vacuumed, before anything is measured: otherwise
 * autovacuum takes up the freshly written rows during a measurement, on the cores the server and the load share.
 * The tables of the current schema only: the database may hold other schemas.
 */
export async function settle(db: Kysely<DB>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect === 'postgres') {
    const { rows } = await sql<{
      tablename: string
    }>`select tablename from pg_tables where schemaname = current_schema()`.execute(db)
    await sql.raw(`vacuum analyze ${rows.map((r) => `"${r.tablename}"`).join(', ')}`).execute(db)
  } else {
    await sql`analyze`.execute(db)
  }
}

export function scenarios(data: BenchData): Scenario[] {
  return [
    { name: 'GET /whoami', method: 'GET', path: '/whoami' },
    { name: `GET /domains (${DOMAINS})`, method: 'GET', path: '/domains' },
    { name: `GET /domains/{d}/dns (${RECORDS})`, method: 'GET', path: `/domains/${data.bigZone}/dns` },
    {
      name: 'PATCH /domains/{d}/dns',
      method: 'PATCH',
      path: `/domains/${data.bigZone}/dns`,
      body: JSON.stringify({ record: { type: 'TXT', name: '_acme-challenge', value: 'benchmark-token', ttl: 120 } }),
    },
    { name: 'GET /account/tickets/ (page 1, 25)', method: 'GET', path: '/account/tickets/?page=1&limit=25' },
    { name: 'GET /vps', method: 'GET', path: '/vps' },
    { name: 'GET /vps/{id}/backups', method: 'GET', path: `/vps/${data.vpsId}/backups` },
  ]
}
