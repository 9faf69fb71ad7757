import fs from 'node:fs'
import path from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { DEFAULT_MIGRATION_TABLE } from 'kysely'

/**
 * The SQLite header's application id (offset 68) of a file written by `hostapi admin backup`: "hAPI". A live
 * database keeps 0, so a copy of the database file itself is told apart from a backup.
 */
export const BACKUP_APPLICATION_ID = 0x68415049
/** The version of the backup's layout; a restore refuses a newer one. */
export const BACKUP_FORMAT = 1
/** The table of the backup file that describes it (name, value); dropped from the restored database. */
export const MANIFEST_TABLE = 'hostapi_backup'
/** Pages copied per step of the online backup, between two progress reports (4 KiB pages: 16 MiB). */
const PAGES_PER_STEP = 4096

/** A backup refused or failed, with the one line that says why. */
export class BackupError extends Error {}

/** What a backup file says about itself. */
export interface BackupManifest {
  format: number
  /** When the copy's snapshot was taken (ISO 8601): every transaction committed before this time is in it. */
  createdAt: string
  /** The newest migration the hostapi that wrote it knows: the release it needs, at least. */
  writtenBy: string
  /** The migrations run on the database it copies, in the order they ran. */
  migrations: string[]
  /** The id of the secret key the database's secrets are sealed with (null before any was stored). */
  secretKeyId: string | null
}

/** The result of a backup. */
export interface BackupResult {
  manifest: BackupManifest
  bytes: number
}

/**
 * Copies the SQLite database `source` to `target` while servers write to it. The copy is one snapshot: a read
 * transaction is held on the source for the whole copy (in WAL mode writers go on meanwhile), so it holds every
 * transaction committed before the call and none committed after the snapshot was taken, and the copy is never
 * restarted by those writes. Written to a temporary file beside `target`, checked (integrity_check), synced and
 * renamed: `target` is the previous file or a whole backup, never a part of one.
 */
export async function backupSqlite(
  source: string,
  target: string,
  opts: { writtenBy: string; now: () => Date; onProgress?: (copied: number, total: number) => void },
): Promise<BackupResult> {
  const dest = path.resolve(target)
  if (sameFile(source, dest) || [`${source}-wal`, `${source}-shm`].some((f) => sameFile(f, dest)))
    throw new BackupError(`${target} is the database itself: name another file`)
  if (!fs.existsSync(path.dirname(dest))) throw new BackupError(`The folder of ${target} does not exist`)
  const tmp = `${dest}.partial-${process.pid}`
  fs.rmSync(tmp, { force: true })
  try {
    const src = new SqliteDatabase(source, { fileMustExist: true })
    let manifest: BackupManifest
    try {
      src.pragma('busy_timeout = 5000')
      // Read before the snapshot starts: every transaction committed before this time is in the copy.
      const createdAt = opts.now().toISOString()
      src.exec('BEGIN')
      // The snapshot starts with this first read; the copy below reads in the same transaction.
      const migrations = executedMigrations(src)
      manifest = {
        format: BACKUP_FORMAT,
        createdAt,
        writtenBy: opts.writtenBy,
        migrations,
        secretKeyId: secretKeyId(src),
      }
      await src.backup(tmp, {
        progress: ({ totalPages, remainingPages }) => {
          opts.onProgress?.(totalPages - remainingPages, totalPages)
          return PAGES_PER_STEP
        },
      })
      src.exec('COMMIT')
    } finally {
      src.close()
    }
    const copy = new SqliteDatabase(tmp, { fileMustExist: true })
    try {
      // One self-contained file: no write-ahead log beside it.
      copy.pragma('journal_mode = DELETE')
      copy.pragma(`application_id = ${BACKUP_APPLICATION_ID}`)
      copy.exec(`CREATE TABLE ${MANIFEST_TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`)
      const put = copy.prepare(`INSERT INTO ${MANIFEST_TABLE} (name, value) VALUES (?, ?)`)
      for (const [name, value] of Object.entries(manifest)) put.run(name, JSON.stringify(value))
      const check = integrity(copy)
      if (check !== 'ok') throw new BackupError(`The copy failed SQLite's integrity check: ${check}`)
    } finally {
      copy.close()
    }
    syncFile(tmp)
    fs.renameSync(tmp, dest)
    syncFile(path.dirname(dest))
    return { manifest, bytes: fs.statSync(dest).size }
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    throw err
  }
}

/**
 * The manifest of the backup `file` after checking it: a SQLite database written by `hostapi admin backup`, of a
 * backup format and with migrations this release knows (`known`), passing SQLite's integrity check. Throws a
 * BackupError saying what the file is otherwise.
 */
export function readBackup(file: string, known: Record<string, unknown>): BackupManifest {
  let header: Buffer
  try {
    header = Buffer.alloc(100)
    const fd = fs.openSync(file, 'r')
    try {
      header = header.subarray(0, fs.readSync(fd, header, 0, 100, 0))
    } finally {
      fs.closeSync(fd)
    }
  } catch (err) {
    throw new BackupError(`Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if (header.subarray(0, 5).toString('latin1') === 'PGDMP')
    throw new BackupError(`${file} is a PostgreSQL dump (pg_dump): restore it with pg_restore (docs/backup-restore.md)`)
  if (header.length < 100 || header.subarray(0, 16).toString('latin1') !== 'SQLite format 3\0')
    throw new BackupError(`${file} is not a hostapi backup (not a SQLite database)`)
  if (header.readUInt32BE(68) !== BACKUP_APPLICATION_ID)
    throw new BackupError(
      `${file} is not a hostapi backup (a SQLite database not written by hostapi admin backup; a copy of a database file is not one)`,
    )
  const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true })
  try {
    const manifest = manifestOf(db, file)
    if (manifest.format > BACKUP_FORMAT)
      throw new BackupError(
        `${file} was written by a newer hostapi (one that knows ${manifest.writtenBy}) in backup format ${manifest.format}, newer than this release reads (${BACKUP_FORMAT})`,
      )
    const check = integrity(db)
    if (check !== 'ok') throw new BackupError(`${file} is damaged (SQLite's integrity check: ${check})`)
    const migrations = executedMigrations(db)
    const unknown = migrations.filter((name) => !Object.hasOwn(known, name))
    if (unknown.length)
      throw new BackupError(
        `${file} is of a newer schema than this release knows (migration ${unknown.join(', ')}): restore it with a hostapi release that knows ${unknown.at(-1)}`,
      )
    return { ...manifest, migrations }
  } finally {
    db.close()
  }
}

/**
 * Whether another connection has the SQLite database `file` open (a server, another command): asks for an
 * exclusive lock, without waiting, and lets it go at once.
 */
export function sqliteInUse(file: string): boolean {
  if (!fs.existsSync(file)) return false
  const db = new SqliteDatabase(file, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 0')
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
    db.exec('COMMIT')
    return false
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return true
    throw err
  } finally {
    db.close()
  }
}

/**
 * Copies the backup `file` to a new database file beside `target`, as a database (without the manifest, with the
 * application id of a live one); answers its path. The caller migrates it and puts it in place (placeRestored).
 */
export function copyForRestore(file: string, target: string): string {
  const tmp = `${target}.restoring-${process.pid}`
  removeDatabaseFiles(tmp)
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 })
  fs.copyFileSync(file, tmp)
  fs.chmodSync(tmp, 0o600)
  const db = new SqliteDatabase(tmp, { fileMustExist: true })
  try {
    db.exec(`DROP TABLE ${MANIFEST_TABLE}`)
    db.pragma('application_id = 0')
  } finally {
    db.close()
  }
  return tmp
}

/**
 * Puts the restored database `prepared` in the place of `target`. A database already there is kept beside it as
 * `<target>.before-restore-<stamp>` (its write-ahead log checkpointed into it first), and `prepared` replaces it
 * in one rename. Answers the name of the kept database, or null. Refuses while another connection has `target`
 * open.
 */
export function placeRestored(prepared: string, target: string, stamp: string): string | null {
  let kept: string | null = null
  if (fs.existsSync(target)) {
    if (sqliteInUse(target)) throw inUse(target)
    const db = new SqliteDatabase(target, { fileMustExist: true })
    try {
      db.pragma('busy_timeout = 0')
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
      if (result && result.busy !== 0) throw inUse(target)
    } finally {
      // The last connection to close removes the -wal and -shm files.
      db.close()
    }
    const wal = `${target}-wal`
    if (fs.existsSync(wal) && fs.statSync(wal).size > 0) throw inUse(target)
    kept = `${target}.before-restore-${stamp}`
    fs.linkSync(target, kept)
    for (const f of [wal, `${target}-shm`, `${target}-journal`]) fs.rmSync(f, { force: true })
  }
  syncFile(prepared)
  fs.renameSync(prepared, target)
  syncFile(path.dirname(target))
  return kept
}

/** The error of a database some process has open. */
export const inUse = (file: string) =>
  new BackupError(
    `The database ${file} is in use (a hostapi server or another process has it open): stop every server on it, then restore`,
  )

/** Removes a SQLite database file and the files SQLite keeps beside it. */
export function removeDatabaseFiles(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) fs.rmSync(f, { force: true })
}

function manifestOf(db: SqliteDatabase.Database, file: string): BackupManifest {
  let rows: { name: string; value: string }[]
  try {
    rows = db.prepare(`SELECT name, value FROM ${MANIFEST_TABLE}`).all() as { name: string; value: string }[]
  } catch {
    throw new BackupError(`${file} is not a hostapi backup (it has no manifest)`)
  }
  const values = new Map<string, unknown>()
  for (const r of rows) {
    try {
      values.set(r.name, JSON.parse(r.value))
    } catch {
      throw new BackupError(`${file} has a damaged manifest (${r.name})`)
    }
  }
  const format = values.get('format')
  if (typeof format !== 'number' || !Number.isInteger(format) || format < 1)
    throw new BackupError(`${file} has a damaged manifest (format)`)
  const text = (name: string) => (typeof values.get(name) === 'string' ? (values.get(name) as string) : 'unknown')
  const keyId = values.get('secretKeyId')
  return {
    format,
    createdAt: text('createdAt'),
    writtenBy: text('writtenBy'),
    migrations: [],
    secretKeyId: typeof keyId === 'string' ? keyId : null,
  }
}

function executedMigrations(db: SqliteDatabase.Database): string[] {
  try {
    const rows = db.prepare(`SELECT name FROM ${DEFAULT_MIGRATION_TABLE} ORDER BY timestamp, name`).all()
    return (rows as { name: string }[]).map((r) => r.name)
  } catch {
    throw new BackupError('The database has no migrations table: it is not a hostapi database')
  }
}

/** The key id in the envelope of the stored secret key check (`v1:<keyid>:…`), if there is one. */
function secretKeyId(db: SqliteDatabase.Database): string | null {
  try {
    const row = db.prepare("SELECT value FROM secret_key_checks WHERE name = 'secret-key'").get() as
      | { value: string }
      | undefined
    return row?.value.split(':')[1] ?? null
  } catch {
    return null
  }
}

function integrity(db: SqliteDatabase.Database): string {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[]
  return rows.map((r) => r.integrity_check).join('; ')
}

function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [fs.statSync(a), fs.statSync(b)]
    return x.dev === y.dev && x.ino === y.ino
  } catch {
    return path.resolve(a) === path.resolve(b)
  }
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}
