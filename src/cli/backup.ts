// hostapi admin backup FILE and hostapi admin restore FILE.
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import pino from 'pino'
import type { Config } from '../config/config.js'
import { systemClock } from '../clock.js'
import { openDatabase } from '../db/database.js'
import { migrate } from '../db/migrate.js'
import { migrations } from '../db/migrations/index.js'
import {
  backupSqlite,
  BackupError,
  copyForRestore,
  inUse,
  placeRestored,
  readBackup,
  removeDatabaseFiles,
  sqliteInUse,
} from '../db/sqlite-backup.js'
import { databaseIsSetUp } from '../db/start-failures.js'
import { present } from '../lib/invariant.js'
import { SecretBoxError } from '../lib/secret-box.js'
import { SecretsService } from '../modules/secrets/secrets.service.js'
import { loadSecretKeys } from '../secret-key.js'
import { AdminUsageError } from './admin.js'
import { backupPostgres, restorePostgresSteps } from './backup-postgres.js'

/** Where the commands write: `isTTY` turns the progress display on. */
export interface Stream {
  write(s: string): unknown
  isTTY?: boolean
}

/** The newest migration this release knows: a backup records it as the release that wrote it. */
const NEWEST_KNOWN = present(Object.keys(migrations).sort().at(-1), 'the newest migration')

/** Whether an admin command line is `backup …` or `restore …` (run without the context of the other commands). */
export const isBackupCommand = (argv: string[]): boolean => argv[0] === 'backup' || argv[0] === 'restore'

/**
 * Runs `admin backup FILE` or `admin restore FILE`; returns the exit code. The result is one line on `out`;
 * progress (on a terminal), warnings and the steps after a restore go to `err`. A refusal or failure is one
 * line on `err` and exit code 1.
 */
export async function runBackupCommand(config: Config, argv: string[], out: Stream, err: Stream): Promise<number> {
  const [command, ...rest] = argv
  let positionals: string[]
  try {
    positionals = parseArgs({ args: rest, options: {}, allowPositionals: true, strict: true }).positionals
  } catch (e) {
    throw new AdminUsageError(`${(e as Error).message}\n\nUsage: hostapi admin ${command} FILE`)
  }
  if (positionals.length !== 1 || positionals[0] === '')
    throw new AdminUsageError(`Name one file: hostapi admin ${command} FILE`)
  const file = positionals[0]
  try {
    if (command === 'backup' && !(await databaseIsSetUp(config.database)))
      throw new BackupError(
        `No hostapi database at ${config.database.dialect === 'sqlite' ? config.database.file : 'DATABASE_URL'}: ` +
          "set HOSTAPI_DATA_DIR or DATABASE_URL (and HOSTAPI_DB_SCHEMA) to the server's",
      )
    if (config.database.dialect === 'postgres') {
      if (command === 'backup') return await backupPostgres(config.database, file, out, err)
      err.write(restorePostgresSteps(config.database, file))
      return 1
    }
    return command === 'backup'
      ? await backup(config, config.database.file, file, out, err)
      : await restore(config, config.database.file, file, out, err)
  } catch (e) {
    if (e instanceof BackupError || e instanceof SecretBoxError) {
      err.write(`${e.message}\n`)
      return 1
    }
    throw e
  }
}

async function backup(config: Config, database: string, file: string, out: Stream, err: Stream): Promise<number> {
  const started = performance.now()
  const progress = progressOn(err, 'backup')
  const { manifest, bytes } = await backupSqlite(database, file, {
    writtenBy: NEWEST_KNOWN,
    now: () => systemClock.now(),
    onProgress: progress,
  }).catch((e) => {
    // The message starts on a line of its own, after the progress display.
    if (progress) err.write('\n')
    throw e
  })
  progress?.()
  const seconds = ((performance.now() - started) / 1000).toFixed(2)
  if (manifest.secretKeyId)
    err.write(
      `Keep the secret key (key id ${manifest.secretKeyId}, ${keySource(config)}) with this backup, stored apart ` +
        'from it: the secrets in the backup open only with that key\n',
    )
  out.write(
    `backup written: ${file} (${mib(bytes)}, schema ${manifest.migrations.at(-1)}, snapshot of ${manifest.createdAt}, ${seconds} s)\n`,
  )
  return 0
}

async function restore(config: Config, database: string, file: string, out: Stream, err: Stream): Promise<number> {
  const manifest = readBackup(file, migrations)
  const box = secretKeysFor(config, manifest.secretKeyId)
  if (sqliteInUse(database)) throw inUse(database)
  err.write(`restoring ${file} (snapshot of ${manifest.createdAt}) into ${database}\n`)
  const prepared = copyForRestore(file, database)
  let applied: string[]
  try {
    const restored = openDatabase({ dialect: 'sqlite', file: prepared })
    try {
      applied = (await migrate(restored.db)).applied
      // Every stored secret opens with the key configured here (and those kept in plaintext get sealed).
      await new SecretsService({ db: restored.db, clock: systemClock, box }).verify()
    } finally {
      await restored.close()
    }
  } catch (e) {
    removeDatabaseFiles(prepared)
    if (e instanceof SecretBoxError) throw keyRefused(config, manifest.secretKeyId, box.currentKeyId, e.message)
    throw e
  }
  let kept: string | null
  try {
    kept = placeRestored(
      prepared,
      database,
      systemClock
        .now()
        .toISOString()
        .replace(/[-:]|\.\d+/g, ''),
    )
  } catch (e) {
    removeDatabaseFiles(prepared)
    throw e
  }
  err.write(afterRestore(manifest.createdAt, manifest.secretKeyId))
  const migrated = applied.length ? `, migrated: ${applied.join(', ')}` : ''
  const previous = kept ? `; the database it replaced is kept as ${kept}` : ''
  out.write(`restored: ${file} (snapshot of ${manifest.createdAt}) into ${database}${migrated}${previous}\n`)
  return 0
}

/**
 * The secret keys this instance is configured with. None is generated for a backup whose secrets are sealed (a
 * new key would open none of them): the key kept with the backup is asked for.
 */
function secretKeysFor(config: Config, sealedWith: string | null) {
  const keyFile = path.join(config.dataDir, 'secret.key')
  if (sealedWith && !config.secrets.key && !config.secrets.keyFile && !fs.existsSync(keyFile))
    throw new BackupError(
      `No secret key is configured here: the backup's secrets are sealed with key id ${sealedWith}. ` +
        `Put the key kept with the backup in ${keyFile} (chmod 600), or set HOSTAPI_SECRET_KEY or HOSTAPI_SECRET_KEY_FILE, and restore again`,
    )
  const box = loadSecretKeys(config, pino({ level: 'silent' })).box
  if (sealedWith && !box.keyIds.includes(sealedWith)) throw keyRefused(config, sealedWith, box.currentKeyId)
  return box
}

const keyRefused = (config: Config, sealedWith: string | null, configured: string, detail?: string) =>
  new BackupError(
    `The secret key configured here (${keySource(config)}, key id ${configured}) does not open the backup's secrets` +
      `${sealedWith ? ` (sealed with key id ${sealedWith})` : ''}${detail ? `: ${detail}` : ''}. ` +
      'Configure the key kept with the backup (HOSTAPI_SECRET_KEY, HOSTAPI_SECRET_KEY_FILE or secret.key in the data directory) and restore again; nothing was changed',
  )

/** Where this configuration takes the secret key from, for messages. */
function keySource(config: Config): string {
  if (config.secrets.key) return 'HOSTAPI_SECRET_KEY'
  if (config.secrets.keyFile) return `HOSTAPI_SECRET_KEY_FILE ${config.secrets.keyFile}`
  return path.join(config.dataDir, 'secret.key')
}

/** What to do after a restore (docs/backup-restore.md, "After a restore"). */
export const afterRestore = (snapshot: string, keyId: string | null): string => `After the restore:
  - Start the server. Writes acknowledged after ${snapshot} are not in this database.
  - DNS: run \`hostapi admin dns resync\` once the server runs (the PowerDNS driver's zones are rebuilt from the
    database; the built-in DNS server serves the database itself).
  - VPS: machines created, changed or deleted in the hypervisor (LXD) after the snapshot are not known here or are
    shown as they were; there is no resync command: compare the hypervisor with GET /vps and fix by hand.
  - Jobs and webhook deliveries queued or running at the snapshot run again (at least once): receivers may get an
    event a second time, with the same id.
  - API keys and admin tokens revoked after the snapshot are valid again: revoke them again; those created after it
    do not exist.
${keyId ? `  - The secrets are sealed with the secret key ${keyId}: keep running with that key.\n` : ''}`

/** A progress display on a terminal (`\r`, one line), or nothing. */
function progressOn(stream: Stream, what: string) {
  if (!stream.isTTY) return undefined
  let pages = 0
  /** Shows `copied` of `total` pages; without them, the end (every page of the last total). */
  return (copied?: number, total?: number) => {
    const done = copied === undefined
    if (total !== undefined) pages = total
    const n = done ? pages : (copied ?? 0)
    const percent = pages ? Math.floor((n / pages) * 100) : 100
    stream.write(`\r${what}: ${percent}% (${n} of ${pages} pages)${done ? '\n' : ''}`)
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
