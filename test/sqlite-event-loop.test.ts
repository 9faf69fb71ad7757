import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import SqliteDatabase from 'better-sqlite3'
import { startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import { eventually } from './helpers/wait.js'
import { API_PREFIX } from '../src/http/constants.js'

/**
 * SQLite allows one writer: a write waits while another connection (another worker of `serve --workers N`, the
 * command line) holds the write lock. The wait must not hold the event loop: every other request of the process
 * would wait with it, and here the holder, in the same process, could never let go. PostgreSQL's row locks are waited
 * for by the server, never by the event loop.
 */
describe('a write waiting for another connection’s SQLite write lock', () => {
  let t: TestApp
  let a: TestAccount
  let zone: string
  before(async () => {
    t = await startTestApp('sqlite')
    a = await t.account('Lock wait')
    zone = await makeDomain(t, a)
  })
  after(() => t?.close())

  it('leaves the event loop free, and commits once the lock is let go', async () => {
    assert.equal(t.config.database.dialect, 'sqlite')
    const holder = new SqliteDatabase((t.config.database as { file: string }).file)
    const loop = monitorEventLoopDelay({ resolution: 10 })
    try {
      holder.pragma('busy_timeout = 0')
      holder.exec('BEGIN IMMEDIATE')
      loop.enable()
      const before = t.ctx.roundTrips()
      const record = { type: 'TXT', name: 'lock-wait', value: 'written after the wait', ttl: 300 }
      const patch = t.request('PATCH', `${API_PREFIX}/domains/${zone}/dns`, { key: a.key, body: { record } })
      // Each attempt at the lock is a statement: several mean the PATCH is waiting.
      await eventually(() => t.ctx.roundTrips() >= before + 4, { what: 'the PATCH trying for the lock' })
      const who = await t.request('GET', `${API_PREFIX}/whoami`, { key: a.key })
      assert.equal(who.status, 200, 'another request is answered meanwhile')
      holder.exec('COMMIT')
      const reply = await patch
      loop.disable()
      assert.equal(reply.status, 200, reply.text)
      assert.ok(loop.max / 1e6 < 1000, `the event loop was held for ${Math.round(loop.max / 1e6)} ms`)
      const zoneNow = await t.request('GET', `${API_PREFIX}/domains/${zone}/dns`, { key: a.key })
      assert.ok(zoneNow.text.includes('written after the wait'), zoneNow.text)
    } finally {
      loop.disable()
      if (holder.inTransaction) holder.exec('ROLLBACK')
      holder.close()
    }
  })

  it('answers 503 with Retry-After when the lock is held past the wait, and writes nothing', async () => {
    const holder = new SqliteDatabase((t.config.database as { file: string }).file)
    try {
      holder.pragma('busy_timeout = 0')
      holder.exec('BEGIN IMMEDIATE')
      const record = { type: 'TXT', name: 'lock-held', value: 'never written', ttl: 300 }
      const reply = await t.request('PATCH', `${API_PREFIX}/domains/${zone}/dns`, { key: a.key, body: { record } })
      assert.equal(reply.status, 503, reply.text)
      assert.ok(reply.headers['retry-after'], 'Retry-After')
      assert.equal(reply.body.status, 503)
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
      holder.close()
    }
    const zoneNow = await t.request('GET', `${API_PREFIX}/domains/${zone}/dns`, { key: a.key })
    assert.ok(!zoneNow.text.includes('never written'), zoneNow.text)
  })
})

/**
 * SQLite copies its write-ahead log into the database file (a checkpoint, with an fsync) inside the commit that fills
 * the log past 1,000 pages, so on the event loop; here a thread of its own does it, shortly after each commit.
 */
describe('SQLite checkpoints', () => {
  let t: TestApp
  let a: TestAccount
  before(async () => {
    t = await startTestApp('sqlite')
    a = await t.account('Checkpoints')
  })
  after(() => t?.close())

  it('a commit far below 1,000 pages reaches the database file without another write', async () => {
    const zone = await makeDomain(t, a)
    const file = (t.config.database as { file: string }).file
    const dir = tempDir()
    try {
      // The database file alone, without its log: only what a checkpoint copied.
      const inFile = () => {
        const copy = path.join(dir, `copy-${Date.now()}-${Math.random()}.db`)
        fs.copyFileSync(file, copy)
        const db = new SqliteDatabase(copy, { readonly: true })
        try {
          return db.prepare('select count(*) as n from domains where name = ?').get(zone) as { n: number }
        } finally {
          db.close()
        }
      }
      await eventually(() => inFile().n === 1, { what: 'the new domain in the database file' })
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
