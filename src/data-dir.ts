import fs from 'node:fs'
import path from 'node:path'
import type { Logger } from 'pino'
import type { Config } from './config/config.js'

/** The process umask of every hostapi command: files and directories it creates (SQLite's too) are owner-only. */
export const PRIVATE_UMASK = 0o077

/** The files of the data directory that hold secrets (the SQLite database is added where it lives). */
export const SECRET_FILES = [
  'tls-key.pem',
  'demo-api-key',
  'demo-subuser-api-key',
  'demo-admin-token',
  'secret.key',
] as const

/**
 * Creates the data directory owner-only (0700) and makes the secret files already in it owner-only (0600):
 * the SQLite database with its -wal and -shm (SQLite gives new -wal/-shm files the database file's mode),
 * the generated TLS key, the demo keys and admin token and the generated secret key. An existing data directory open to group
 * or others is left as the operator made it, with a warning: the files in it are owner-only either way.
 */
export function prepareDataDir(config: Config, log: Logger): void {
  const dir = config.dataDir
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  } else if (fs.statSync(dir).mode & 0o077) {
    log.warn(
      { dataDir: dir, mode: octal(fs.statSync(dir).mode) },
      'the data directory is open to group or others; make it owner-only (chmod 700)',
    )
  }
  const files: string[] = SECRET_FILES.map((f) => path.join(dir, f))
  if (config.database.dialect === 'sqlite' && config.database.file !== ':memory:') {
    const db = config.database.file
    files.push(db, `${db}-wal`, `${db}-shm`, `${db}-journal`)
  }
  for (const file of files) makeOwnerOnly(file, log)
  if (config.tls.keyFile) warnIfOpen(config.tls.keyFile, 'HOSTAPI_TLS_KEY', log)
  if (config.secrets.keyFile) warnIfOpen(config.secrets.keyFile, 'HOSTAPI_SECRET_KEY_FILE', log)
}

/** chmod 600 when `file` exists and group or others may use it; logs what it changed. */
export function makeOwnerOnly(file: string, log?: Logger): void {
  let mode: number
  try {
    mode = fs.statSync(file).mode
  } catch {
    return
  }
  if (!(mode & 0o077)) return
  fs.chmodSync(file, 0o600)
  log?.warn({ file, was: octal(mode) }, 'made a file holding secrets owner-only (chmod 600)')
}

function warnIfOpen(file: string, name: string, log: Logger): void {
  try {
    const mode = fs.statSync(file).mode
    if (mode & 0o077)
      log.warn({ file, mode: octal(mode) }, `${name} is readable by group or others; make it owner-only (chmod 600)`)
  } catch {
    // A missing file is reported where it is read.
  }
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(3, '0')
