import fs from 'node:fs'
import { parseEnv } from 'node:util'
import type { Env } from './env-reader.js'
import { ConfigError } from './config.js'

/**
 * The variables of an env file (`NAME=value` lines, `#` comments, quoted values, as Node's `--env-file` reads them).
 * A file that cannot be read is a configuration problem.
 */
export function readEnvFile(file: string): Env {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError([`--env-file ${file} cannot be read: ${(err as Error).message}`])
  }
  return parseEnv(text) as Env
}
