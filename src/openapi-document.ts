import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from './config/config.js'
import { createContext } from './context.js'
import { buildApp } from './app.js'
import { ADMIN_PREFIX } from './http/constants.js'

/** The customer API's OpenAPI document as the code defines it, built on a throw-away in-memory database. */
export async function openapiDocument(): Promise<unknown> {
  return (await openapiDocuments()).customer
}

/**
 * Both OpenAPI documents as the code defines them: the customer API's and the admin API's (in sandbox mode, so
 * with the sandbox controls), built on a throw-away in-memory database.
 */
export async function openapiDocuments(): Promise<{ customer: unknown; admin: unknown }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-openapi-'))
  const ctx = createContext(
    loadConfig({
      HOSTAPI_DATA_DIR: dataDir,
      DATABASE_URL: 'sqlite::memory:',
      HOSTAPI_LOG_LEVEL: 'silent',
      HOSTAPI_JOBS: '0',
      HOSTAPI_SANDBOX: '1',
      // The admin document is read through the app, as over HTTPS behind a proxy on loopback.
      HOSTAPI_TRUSTED_PROXIES: '127.0.0.1',
    }),
  )
  try {
    const app = await buildApp(ctx)
    const customer = app.swagger()
    const headers = { 'x-forwarded-proto': 'https' }
    const admin = (await app.inject({ method: 'GET', url: `${ADMIN_PREFIX}/openapi.json`, headers })).json()
    await app.close()
    return { customer, admin }
  } finally {
    await ctx.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The committed form: stable key order as generated, two-space indent, final newline. */
export const serialiseOpenapi = (doc: unknown): string => `${JSON.stringify(doc, null, 2)}\n`
