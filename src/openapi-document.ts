import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from './config/config.js'
import { createContext } from './context.js'
import { buildApp } from './app.js'

/** The OpenAPI document as the code defines it, built on a throw-away in-memory database. */
export async function openapiDocument(): Promise<unknown> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-openapi-'))
  const ctx = createContext(
    loadConfig({
      HOSTAPI_DATA_DIR: dataDir,
      DATABASE_URL: 'sqlite::memory:',
      HOSTAPI_LOG_LEVEL: 'silent',
      HOSTAPI_JOBS: '0',
    }),
  )
  try {
    const app = await buildApp(ctx)
    const doc = app.swagger()
    await app.close()
    return doc
  } finally {
    await ctx.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The committed form: stable key order as generated, two-space indent, final newline. */
export const serialiseOpenapi = (doc: unknown): string => `${JSON.stringify(doc, null, 2)}\n`
