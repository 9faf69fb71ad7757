import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import pg from 'pg'
import {
  describeWithEnv,
  processDatabase,
  request,
  startTestApp,
  tempDir,
  type ProcessDatabase,
  type TestAccount,
  type TestApp,
} from './helpers/app.js'
import { newestDebianProgram } from '../src/cli/backup-postgres.js'
import { migrations } from '../src/db/migrations/index.js'
import { originOf, runAdminCli, runCli, spawnServer, type ServerProcess } from './helpers/process.js'
import { eventually } from './helpers/wait.js'

/** One template write a client sent: its alias, when it was sent, and when it was acknowledged (200), if it was. */
interface Write {
  alias: string
  sentAt: number
  ackedAt: number | null
}

const template = (alias: string) => ({
  alias,
  default: 0,
  records: [{ type: 'A', name: '', value: '203.0.113.10', ttl: 3600 }],
})

const stop = async (server: ServerProcess | undefined) => {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return
  server.child.kill('SIGTERM')
  await server.exited
}

describe('admin backup and restore (sqlite)', () => {
  let place: ProcessDatabase
  let key: string
  let backupFile: string
  let restoredDir: string
  let restoredEnv: Record<string, string>
  const writes: Write[] = []
  let backupStarted = 0
  let backupEnded = 0
  let snapshot = 0
  let restored: ServerProcess | undefined
  const dirs: string[] = []

  before(async () => {
    place = await processDatabase('sqlite')
    assert.equal((await runCli(place.env, 'migrate')).code, 0)
    const customer = (await runAdminCli(place.env, 'account', 'create', '--name', 'Backup B.V.', '--email', 'o@b.test'))
      .out
    key = (await runAdminCli(place.env, 'key', 'create', '--account', customer.trim())).out.trim()
    const backups = tempDir()
    dirs.push(backups)
    backupFile = path.join(backups, 'hostapi.backup')
    restoredDir = tempDir()
    dirs.push(restoredDir)
    restoredEnv = { ...place.env, HOSTAPI_DATA_DIR: restoredDir, DATABASE_URL: `sqlite:${restoredDir}/hostapi.db` }
  })
  after(async () => {
    await stop(restored)
    await place.remove()
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  })

  it('backs up a server under writes; the restore holds every write acknowledged before the backup started', async (t) => {
    const server = spawnServer({ ...place.env, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0' })
    try {
      const origin = await originOf(server)
      let writing = true
      // Four clients write continuously; each write is recorded when sent and when acknowledged.
      const writer = async (w: number) => {
        for (let i = 0; writing; i++) {
          const write: Write = { alias: `w${w}-${i}`, sentAt: Date.now(), ackedAt: null }
          writes.push(write)
          const r = await request(origin, 'POST', '/domains/dns-templates', { key, body: template(write.alias) })
          assert.equal(r.status, 200, `write ${write.alias}: ${r.text}`)
          write.ackedAt = Date.now()
        }
      }
      const writers = [0, 1, 2, 3].map(writer)
      const acked = () => writes.filter((x) => x.ackedAt !== null).length
      await eventually(() => acked() >= 40, { what: '40 writes acknowledged', intervalMs: 10 })
      backupStarted = Date.now()
      const backup = await runCli(place.env, 'admin', 'backup', backupFile)
      backupEnded = Date.now()
      assert.equal(backup.code, 0, backup.err)
      const written = backup.out.match(
        /^backup written: \S+ \([\d.]+ MiB, schema \S+, snapshot of (\S+), [\d.]+ s\)\n$/,
      )
      assert.ok(written, backup.out)
      snapshot = Date.parse(written[1])
      assert.ok(snapshot >= backupStarted && snapshot <= backupEnded, backup.out)
      assert.match(backup.err, /^Keep the secret key \(key id \w+, HOSTAPI_SECRET_KEY\) with this backup/)
      t.diagnostic(
        `${backup.out.trim()}; ${fs.statSync(backupFile).size} bytes; command ${Math.round(backupEnded - backupStarted)} ms`,
      )
      // Writes go on after the backup: those sent after it ended must not be in it.
      const endAcked = acked()
      await eventually(() => acked() >= endAcked + 20, { what: '20 more writes acknowledged', intervalMs: 10 })
      writing = false
      await Promise.all(writers)
    } finally {
      await stop(server)
    }
    assert.deepEqual(
      fs.readdirSync(path.dirname(backupFile)),
      ['hostapi.backup'],
      'no temporary file is left beside the backup',
    )

    const restore = await runCli(restoredEnv, 'admin', 'restore', backupFile)
    assert.equal(restore.code, 0, restore.err)
    assert.match(restore.out, /^restored: \S+ \(snapshot of \S+\) into \S+hostapi\.db\n$/)
    assert.match(restore.err, /hostapi admin dns resync/)
    assert.match(restore.err, /run again \(at least once\)/)

    const db = new SqliteDatabase(path.join(restoredDir, 'hostapi.db'), { readonly: true })
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok')
      assert.equal(db.pragma('application_id', { simple: true }), 0, 'a restored database is not a backup')
    } finally {
      db.close()
    }

    restored = spawnServer({ ...restoredEnv, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0' })
    const r = await request(await originOf(restored), 'GET', '/domains/dns-templates', { key })
    assert.equal(r.status, 200, r.text)
    const stored = new Set((r.body.data.templates as { alias: string }[]).map((x) => x.alias))
    const before = writes.filter((x) => x.ackedAt !== null && x.ackedAt < backupStarted)
    const missing = before.filter((x) => !stored.has(x.alias)).map((x) => x.alias)
    assert.deepEqual(
      missing,
      [],
      `${missing.length} of ${before.length} writes acknowledged before the backup are lost`,
    )
    // Stricter: the backup names the time of its snapshot; every write acknowledged before it is in the backup.
    const beforeSnapshot = writes.filter((x) => x.ackedAt !== null && x.ackedAt < snapshot)
    const lost = beforeSnapshot.filter((x) => !stored.has(x.alias)).map((x) => x.alias)
    assert.deepEqual(
      lost,
      [],
      `${lost.length} of ${beforeSnapshot.length} writes acknowledged before the snapshot lost`,
    )
    const later = writes.filter((x) => x.sentAt > backupEnded && stored.has(x.alias)).map((x) => x.alias)
    assert.deepEqual(later, [], 'writes sent after the backup ended are not in it')
    const unknown = [...stored].filter((alias) => !writes.some((x) => x.alias === alias))
    assert.deepEqual(unknown, [])
    t.diagnostic(
      `${before.length} writes acknowledged before the backup command, ${beforeSnapshot.length} before its snapshot, ${stored.size} in the restored database, ${writes.length} sent`,
    )
  })

  it('refuses to restore into a database a server has open', async () => {
    assert.ok(restored, 'the restored server runs')
    const before = fs.readFileSync(path.join(restoredDir, 'hostapi.db'))
    const r = await runCli(restoredEnv, 'admin', 'restore', backupFile)
    assert.equal(r.code, 1)
    assert.equal(r.out, '')
    assert.match(r.err, /is in use \(a hostapi server or another process has it open\): stop every server on it/)
    assert.ok(before.equals(fs.readFileSync(path.join(restoredDir, 'hostapi.db'))), 'the database is unchanged')
    await stop(restored)
  })

  it('refuses a file that is not a hostapi backup, and one of a newer schema, changing nothing', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const env = { ...place.env, HOSTAPI_DATA_DIR: dir, DATABASE_URL: `sqlite:${dir}/hostapi.db` }
    const text = path.join(dir, 'notes.txt')
    fs.writeFileSync(text, 'not a backup\n'.repeat(20))
    const refused = async (file: string, why: RegExp) => {
      const r = await runCli(env, 'admin', 'restore', file)
      assert.equal(r.code, 1, r.err)
      assert.equal(r.out, '')
      assert.match(r.err, why)
      assert.equal(fs.existsSync(path.join(dir, 'hostapi.db')), false, 'no database is made')
    }
    const newer = path.join(dir, 'newer.backup')
    fs.copyFileSync(backupFile, newer)
    const db = new SqliteDatabase(newer)
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999-from-the-future', 'x')
    db.close()
    await Promise.all([
      refused(text, /notes\.txt is not a hostapi backup \(not a SQLite database\)/),
      // The server's database file itself (a copy of it) is not a backup.
      refused(place.database.dialect === 'sqlite' ? place.database.file : '', /is not a hostapi backup \(a SQLite/),
      refused(newer, /newer\.backup is of a newer schema than this release knows \(migration 9999-from-the-future\)/),
      refused(path.join(dir, 'absent.backup'), /Cannot read \S+absent\.backup: ENOENT/),
    ])
  })

  it("restores a backup of an older schema and migrates it to this release's", async (t) => {
    const dir = tempDir()
    dirs.push(dir)
    // The backup as an older release wrote it: its newest migration undone (its `down`) and not recorded.
    const older = path.join(dir, 'older.backup')
    fs.copyFileSync(backupFile, older)
    const sqlite = new SqliteDatabase(older)
    const newest = (sqlite.prepare('select name from kysely_migration order by name').all() as { name: string }[])
      .map((r) => r.name)
      .at(-1)!
    const down = migrations[newest]?.down
    if (!down) {
      sqlite.close()
      t.skip(`the newest migration ${newest} has no down`)
      return
    }
    const k = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) })
    await down(k)
    await sql`delete from kysely_migration where name = ${newest}`.execute(k)
    await sql`delete from migration_compat where name = ${newest}`.execute(k)
    await k.destroy()

    const env = { ...place.env, HOSTAPI_DATA_DIR: dir, DATABASE_URL: `sqlite:${dir}/hostapi.db` }
    const r = await runCli(env, 'admin', 'restore', older)
    assert.equal(r.code, 0, r.err)
    assert.match(
      r.out,
      new RegExp(`^restored: \\S+older\\.backup \\(snapshot of \\S+\\) into \\S+, migrated: ${newest}\n$`),
    )
    const db = new SqliteDatabase(path.join(dir, 'hostapi.db'), { readonly: true })
    try {
      const ran = (db.prepare('select name from kysely_migration').all() as { name: string }[]).map((x) => x.name)
      assert.deepEqual(ran.sort(), Object.keys(migrations).sort())
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok')
    } finally {
      db.close()
    }
  })

  it('refuses a secret key that does not open the backup, changing nothing', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const other = Buffer.alloc(32, 7).toString('base64')
    const env = { ...place.env, HOSTAPI_DATA_DIR: dir, HOSTAPI_SECRET_KEY: other, DATABASE_URL: `sqlite:${dir}/x.db` }
    const [r, without] = await Promise.all([
      runCli(env, 'admin', 'restore', backupFile),
      runCli({ ...env, HOSTAPI_SECRET_KEY: '' }, 'admin', 'restore', backupFile),
    ])
    assert.equal(r.code, 1, r.err)
    assert.match(r.err, /^The secret key configured here \(HOSTAPI_SECRET_KEY, key id \w+\) does not open the backup's/)
    assert.equal(without.code, 1, without.err)
    assert.match(without.err, /^No secret key is configured here: the backup's secrets are sealed with key id \w+/)
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing is written, no key is generated')
  })
})

/** A PostgreSQL program installed here (on PATH, or Debian's newest), or null. */
function pgProgram(name: string): string | null {
  const onPath = spawnSync(name, ['--version'])
  return onPath.status === 0 ? name : newestDebianProgram(name)
}

describeWithEnv(['HOSTAPI_TEST_PG_URL'], 'admin backup and the pg_restore procedure (postgres)', () => {
  const [pgDump, pgRestore] = [pgProgram('pg_dump'), pgProgram('pg_restore')]
  it('dumps a running server with pg_dump; pg_restore into an empty database and migrate give the data back', {
    skip: pgDump && pgRestore ? false : 'pg_dump or pg_restore is not installed (Debian: postgresql-client)',
  }, async (t) => {
    const place = await processDatabase('postgres')
    const dir = tempDir()
    const url = process.env.HOSTAPI_TEST_PG_URL!
    const restoredDb = `hostapi_restore_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    let restoredApp: TestApp | undefined
    try {
      const source = await startTestApp('postgres', { database: place.database })
      let a: TestAccount
      const aliases: string[] = []
      try {
        a = await source.account('Dump B.V.')
        for (let i = 0; i < 20; i++) {
          const r = await source.request('POST', '/domains/dns-templates', { key: a.key, body: template(`pg-${i}`) })
          assert.equal(r.status, 200, r.text)
          aliases.push(`pg-${i}`)
        }
        const file = path.join(dir, 'hostapi.dump')
        const backup = await runCli(place.env, 'admin', 'backup', file)
        assert.equal(backup.code, 0, backup.err)
        assert.match(backup.out, /^backup written: \S+ \(pg_dump of the schema t_\w+, \d+ bytes, [\d.]+ s\)\n$/)
        assert.equal(fs.readFileSync(file).subarray(0, 5).toString(), 'PGDMP')
        t.diagnostic(backup.out.trim())

        const steps = await runCli(place.env, 'admin', 'restore', file)
        assert.equal(steps.code, 1)
        assert.match(
          steps.err,
          /pg_restore --no-owner --exit-on-error --dbname=URL \S+hostapi\.dump, run hostapi migrate/,
        )

        // The documented procedure: an empty database, pg_restore, hostapi migrate.
        await admin.query(`create database ${restoredDb}`)
        const target = new URL(url)
        target.pathname = `/${restoredDb}`
        const restored = spawnSync(pgRestore!, ['--no-owner', '--exit-on-error', `--dbname=${target}`, file])
        assert.equal(restored.status, 0, String(restored.stderr))
        const database = {
          dialect: 'postgres' as const,
          url: target.toString(),
          schema: place.database.dialect === 'postgres' ? place.database.schema : null,
        }
        const env = { ...place.env, DATABASE_URL: database.url }
        const migrated = await runCli(env, 'migrate')
        assert.equal(migrated.code, 0, migrated.err)
        assert.equal(migrated.out, 'database is up to date\n')
        restoredApp = await startTestApp('postgres', { database })
      } finally {
        await source.close()
      }
      const r = await restoredApp.request('GET', '/domains/dns-templates', { key: a.key })
      assert.equal(r.status, 200, r.text)
      assert.deepEqual((r.body.data.templates as { alias: string }[]).map((x) => x.alias).sort(), aliases.sort())
    } finally {
      await restoredApp?.close()
      await admin.query(`drop database if exists ${restoredDb} with (force)`)
      await admin.end()
      await place.remove()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
