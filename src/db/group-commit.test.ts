import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { GroupCommit, openDatabase } from './database.js'

describe('GroupCommit', () => {
  it('serves concurrent callers with fewer fsyncs than callers, each fsync starting after the call it serves', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-gc-'))
    const file = path.join(dir, 'log')
    fs.writeFileSync(file, 'x')
    const starts: number[] = []
    const real = fs.fsync
    t.mock.method(fs, 'fsync', (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      starts.push(performance.now())
      real(fd, cb)
    })
    const commit = new GroupCommit(file)
    try {
      const calls = Array.from({ length: 50 }, () => {
        const at = performance.now()
        return commit.durable().then(() => at)
      })
      const callTimes = await Promise.all(calls)
      assert.ok(starts.length >= 1 && starts.length <= 2, `50 concurrent callers took ${starts.length} fsyncs`)
      // Every caller is covered by an fsync that started at or after its call.
      for (const at of callTimes) assert.ok(starts.some((s) => s >= at))
      const later = performance.now()
      await commit.durable()
      assert.ok(starts.at(-1)! >= later, 'a call after the others waits for an fsync of its own')
    } finally {
      commit.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a failed fsync fails its callers and the next call syncs again', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-gc-'))
    const file = path.join(dir, 'log')
    fs.writeFileSync(file, 'x')
    const real = fs.fsync
    let fail = true
    t.mock.method(fs, 'fsync', (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      if (fail) {
        fail = false
        return cb(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))
      }
      real(fd, cb)
    })
    const commit = new GroupCommit(file)
    try {
      const first = commit.durable()
      const second = commit.durable()
      await assert.rejects(first, /EIO/)
      await second
      await commit.durable()
    } finally {
      commit.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a SQLite database acknowledges writes through its write-ahead log', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-gc-'))
    const database = openDatabase({ dialect: 'sqlite', file: path.join(dir, 'db.sqlite') })
    try {
      await database.durable()
      const mode = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(database.db)
      assert.equal(mode.rows[0].synchronous, 1, 'NORMAL: a commit writes the log, durable() syncs it')
      await database.db.schema.createTable('t').addColumn('x', 'integer').execute()
      await database.durable()
      assert.ok(fs.existsSync(path.join(dir, 'db.sqlite-wal')))
    } finally {
      await database.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
