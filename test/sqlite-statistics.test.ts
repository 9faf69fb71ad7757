import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import type { Logger } from 'pino'
import { openDatabase } from '../src/db/database.js'
import { migrate } from '../src/db/migrate.js'
import { tempDir, whileSchemasStay } from './helpers/app.js'

/**
 * A plain ANALYZE writes STAT4 samples, with which SQLite compiles a statement again at every run whose plan may
 * use them (src/db/database.ts, dropStat4Samples): opening the database drops them and keeps sqlite_stat1.
 */
describe('SQLite planner statistics at open', () => {
  const dir = tempDir()
  after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'hostapi.db')
  const count = (table: string) => {
    const raw = new SqliteDatabase(file, { readonly: true })
    try {
      return raw.prepare(`select count(*) from ${table}`).pluck().get() as number
    } finally {
      raw.close()
    }
  }

  it('drops the STAT4 samples of an ANALYZE and keeps the other statistics', async () => {
    const first = openDatabase({ dialect: 'sqlite', file })
    await whileSchemasStay('sqlite', () => migrate(first.db, null))
    await first.close()
    const raw = new SqliteDatabase(file)
    const insert = raw.prepare(`insert into accounts (customer_number, name, created_at) values (?, ?, ?)`)
    raw.transaction(() => {
      for (let i = 0; i < 50; i++) insert.run(900000 + i, `Statistics ${i}`, new Date().toISOString())
    })()
    raw.exec('analyze')
    raw.close()
    assert.ok(count('sqlite_stat4') > 0, 'this build of SQLite writes STAT4 samples')
    const stat1 = count('sqlite_stat1')
    assert.ok(stat1 > 0)

    const said: string[] = []
    const log = { info: (msg: string) => said.push(msg) } as unknown as Logger
    const reopened = openDatabase({ dialect: 'sqlite', file }, { log })
    await reopened.close()
    assert.equal(count('sqlite_stat4'), 0)
    assert.equal(count('sqlite_stat1'), stat1)
    assert.deepEqual(said, ['dropped the STAT4 samples a plain ANALYZE wrote (sqlite_stat1 kept)'])

    // Nothing to drop: nothing said.
    const again = openDatabase({ dialect: 'sqlite', file }, { log })
    await again.close()
    assert.equal(said.length, 1)
  })

  it('opens while another connection holds the write lock, leaving the samples to a later open', async () => {
    const raw = new SqliteDatabase(file)
    raw.exec('analyze')
    assert.ok(count('sqlite_stat4') > 0)
    raw.exec('begin immediate')
    try {
      const opened = openDatabase({ dialect: 'sqlite', file })
      await opened.close()
      assert.ok(count('sqlite_stat4') > 0)
    } finally {
      raw.exec('rollback')
      raw.close()
    }
    const later = openDatabase({ dialect: 'sqlite', file })
    await later.close()
    assert.equal(count('sqlite_stat4'), 0)
  })
})
