import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../../../config/config.js'
import { createContext } from '../../../context.js'
import { migrate } from '../../../db/migrate.js'
import { seedDemoIfEmpty } from '../../../seed/demo.js'

describe('DNS record inserts', () => {
  it('give the event loop a turn between chunks of a large zone import (SQLite is synchronous)', {
    timeout: 120_000,
  }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-dnsrepo-'))
    const ctx = createContext(
      loadConfig({
        ...process.env,
        HOSTAPI_DATA_DIR: dir,
        HOSTAPI_LOG_LEVEL: 'silent',
        HOSTAPI_DEMO_KEY: 'dnsRepoDnsRepoDnsRepoDnsRepo0001',
        DATABASE_URL: `sqlite:${path.join(dir, 'hostapi.db')}`,
        HOSTAPI_ZONE_INLINE_BYTES: '100000000',
      }),
    )
    try {
      await migrate(ctx.db, ctx.dbSchema)
      await seedDemoIfEmpty(ctx)
      const d = await ctx.db
        .selectFrom('domains')
        .select(['account_id', 'name'])
        .where('name', '=', 'demo-shop.nl')
        .executeTakeFirstOrThrow()
      const text = Array.from({ length: 3000 }, (_, i) => `h${i} 300 IN A 192.0.2.${i % 250}`).join('\n')
      // The parse runs inline (threshold raised above): any macrotask turn before the import ends comes from the inserts.
      let turns = 0
      let done = false
      const tick = (): void => {
        if (done) return
        turns++
        setImmediate(tick)
      }
      const importing = ctx.services.dns.importZone(d.account_id, d.name, text).finally(() => (done = true))
      setImmediate(tick)
      await importing
      assert.ok(turns >= 2, `the event loop had ${turns} turns during the import`)
      const count = await ctx.db
        .selectFrom('dns_records')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
      assert.ok(Number(count.n) >= 3000)
    } finally {
      await ctx.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
