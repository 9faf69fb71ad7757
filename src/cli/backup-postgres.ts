// hostapi admin backup on PostgreSQL: pg_dump, when it is installed here.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { BackupError } from '../db/sqlite-backup.js'
import { shownUrl } from '../db/start-failures.js'

type Postgres = { url: string; schema: string | null }
interface Stream {
  write(s: string): unknown
}

/** Where Debian's packages put the PostgreSQL programs, one folder per major version. */
const DEBIAN_PG = '/usr/lib/postgresql'

/**
 * pg_dump's arguments for a custom-format dump (pg_restore reads it) of hostapi's schema (HOSTAPI_DB_SCHEMA) or,
 * without one, of the whole database, into `file`; `url` is the connection string to give it.
 */
export const pgDumpArgs = (db: Postgres, file: string, url: string): string[] => [
  '--format=custom',
  `--file=${file}`,
  ...(db.schema ? [`--schema=${db.schema}`] : []),
  `--dbname=${url}`,
]

/**
 * Dumps the database with pg_dump (from PATH, or else Debian's newest /usr/lib/postgresql/N/bin/pg_dump) into a
 * temporary file beside `file`, renamed to `file` once pg_dump succeeded. The password of the URL goes to pg_dump in
 * a passfile only this user reads, not on its command line. Without pg_dump: says what to run, exit 1.
 */
export async function backupPostgres(db: Postgres, file: string, out: Stream, err: Stream): Promise<number> {
  const dest = path.resolve(file)
  const tmp = `${dest}.partial-${process.pid}`
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-pgpass-'))
  const started = performance.now()
  try {
    const url = withPassfile(db.url, dir)
    let ran = await run('pg_dump', pgDumpArgs(db, tmp, url))
    const debian = ran === 'missing' ? newestDebianProgram('pg_dump') : null
    if (debian) ran = await run(debian, pgDumpArgs(db, tmp, url))
    if (ran === 'missing') {
      err.write(
        `pg_dump is not installed here: run ${['pg_dump', ...pgDumpArgs(db, file, shownUrl(db.url))].map(quote).join(' ')} ` +
          '(with the password of DATABASE_URL), see docs/backup-restore.md\n',
      )
      return 1
    }
    if (ran !== 'ok') throw new BackupError(`pg_dump failed: ${ran.trim()}`)
    fs.renameSync(tmp, dest)
  } finally {
    fs.rmSync(tmp, { force: true })
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(2)
  const what = db.schema ? `schema ${db.schema}` : 'database'
  err.write(
    'Keep the secret key (HOSTAPI_SECRET_KEY or HOSTAPI_SECRET_KEY_FILE) with this dump, stored apart from it: ' +
      'the secrets in it open only with that key\n',
  )
  out.write(`backup written: ${file} (pg_dump of the ${what}, ${fs.statSync(dest).size} bytes, ${seconds} s)\n`)
  return 0
}

/** `hostapi admin restore` on PostgreSQL: the steps to run, as the command does not run them. */
export const restorePostgresSteps = (db: Postgres, file: string): string =>
  `On PostgreSQL, hostapi admin restore does not restore: stop the servers, then restore ${file} into an empty database${
    db.schema ? ` (without the schema ${db.schema})` : ''
  } with pg_restore --no-owner --exit-on-error --dbname=URL ${quote(file)}, run hostapi migrate and start the servers (docs/backup-restore.md)\n`

/** Runs a program: 'ok', 'missing' when it is not installed, or what it printed on stderr when it failed. */
function run(program: string, args: string[]): Promise<'ok' | 'missing' | string> {
  return new Promise((resolve) => {
    execFile(program, args, { maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error) resolve('ok')
      else if ((error as NodeJS.ErrnoException).code === 'ENOENT') resolve('missing')
      else resolve(stderr || error.message)
    })
  })
}

/** Debian's `program` of its newest PostgreSQL version installed here, or null. */
export function newestDebianProgram(program: string): string | null {
  let versions: string[]
  try {
    versions = fs.readdirSync(DEBIAN_PG).filter((v) => /^\d+$/.test(v))
  } catch {
    return null
  }
  for (const v of versions.sort((a, b) => Number(b) - Number(a))) {
    const candidate = path.join(DEBIAN_PG, v, 'bin', program)
    if (fs.existsSync(candidate)) return candidate
  }
  return null
}

/** `url` without its password, which goes to a passfile in `dir` named by the URL's `passfile` parameter. */
function withPassfile(url: string, dir: string): string {
  const u = new URL(url)
  if (!u.password) return url
  const passfile = path.join(dir, 'pgpass')
  const password = decodeURIComponent(u.password).replace(/[\\:]/g, (c) => `\\${c}`)
  fs.writeFileSync(passfile, `*:*:*:*:${password}\n`, { mode: 0o600 })
  u.password = ''
  u.searchParams.set('passfile', passfile)
  return u.toString()
}

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)
