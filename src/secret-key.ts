import fs from 'node:fs'
import path from 'node:path'
import type { Logger } from 'pino'
import { ConfigError, type Config } from './config/config.js'
import { newSecretKeyText, parseSecretKey, SecretBox } from './lib/secret-box.js'

/** The keys that seal secrets at rest, and where the current one came from (for messages). */
export interface SecretKeys {
  box: SecretBox
  /** `HOSTAPI_SECRET_KEY`, `HOSTAPI_SECRET_KEY_FILE (<path>)` or `<dataDir>/secret.key`. */
  source: string
}

/**
 * The configured key (HOSTAPI_SECRET_KEY, or the file HOSTAPI_SECRET_KEY_FILE), or else `<dataDir>/secret.key`,
 * generated (0600) on first start; with HOSTAPI_SECRET_KEY_PREVIOUS and HOSTAPI_SECRET_KEY_NEXT, which open values
 * sealed with the key before a rotation and with the key after it.
 * Problems are ConfigErrors: the process stops with the message, before it serves anything.
 */
export function loadSecretKeys(config: Config, log: Logger): SecretKeys {
  const { key, previous, next } = config.secrets
  const others = previous.map((k) => configuredKey(k, 'HOSTAPI_SECRET_KEY_PREVIOUS'))
  if (next) others.push(configuredKey(next, 'HOSTAPI_SECRET_KEY_NEXT'))
  if (key) return { box: new SecretBox(configuredKey(key, 'HOSTAPI_SECRET_KEY'), others), source: 'HOSTAPI_SECRET_KEY' }
  if (config.secrets.keyFile) {
    const source = `HOSTAPI_SECRET_KEY_FILE (${config.secrets.keyFile})`
    return { box: new SecretBox(readKeyFile(config.secrets.keyFile, source), others), source }
  }
  const file = path.join(config.dataDir, 'secret.key')
  if (!fs.existsSync(file)) {
    try {
      fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
      fs.writeFileSync(file, `${newSecretKeyText()}\n`, { mode: 0o600, flag: 'wx' })
      log.warn(
        { file, shared: config.database.dialect === 'postgres' },
        'generated the secret key that encrypts secrets at rest: back it up with the database' +
          (config.database.dialect === 'postgres'
            ? '; every instance on this database needs the same key (HOSTAPI_SECRET_KEY or HOSTAPI_SECRET_KEY_FILE)'
            : ''),
      )
    } catch (err) {
      // Another process sharing the data directory wrote it first.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
  return { box: new SecretBox(readKeyFile(file, file), others), source: file }
}

function readKeyFile(file: string, source: string): Buffer {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError([
      `${source}: cannot read the secret key (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    ])
  }
  return configuredKey(text, source)
}

/** The key written in `text`; a ConfigError naming `source` when it is not a key (the configuration checks it). */
function configuredKey(text: string, source: string): Buffer {
  const key = parseSecretKey(text)
  if (!key) throw new ConfigError([`${source} must hold a key of 32 bytes as 64 hex digits or as base64`])
  return key
}
