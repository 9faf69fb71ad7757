// What `npm run bench` measures, and the data it needs, seeded through the project's own services
// before the server starts.
import { loadConfig } from '../src/config/config.js'
import { createContext } from '../src/context.js'
import { migrate } from '../src/db/database.js'
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
}

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
    return { customerNumber: seeded.customerNumber }
  } finally {
    await ctx.close()
  }
}

export function scenarios(_data: BenchData): Scenario[] {
  return [{ name: 'GET /whoami', method: 'GET', path: '/whoami' }]
}
