import fs from 'node:fs'
import tls from 'node:tls'
import type { Logger } from 'pino'
import type { Config } from './config/config.js'
import { loadTls } from './tls.js'

/** How often the configured certificate and key files (HOSTAPI_TLS_CERT, HOSTAPI_TLS_KEY) are checked for a change. */
export const TLS_WATCH_MS = 1000
/**
 * How long a reload waits after a change of either file for the other one: a key and a certificate replaced one
 * after the other are read as one pair.
 */
const SETTLE_MS = 500

export interface TlsReloader {
  /**
   * Reads the certificate and key again and serves them on new connections (open ones keep theirs). When they cannot
   * be read or do not belong together, the served pair stays and an error is logged: answers false.
   */
  reload(reason: string): Promise<boolean>
  /** Stops watching the files. */
  close(): void
}

/**
 * Reloads the TLS certificate and key of `servers` without a restart, on `reload()` (SIGHUP) and, for configured
 * files, when either file changes (checked every TLS_WATCH_MS; a replacement by rename or a symbolic link moved to
 * a new target counts too).
 */
export function tlsReloader(config: Config, servers: tls.Server[], log: Logger): TlsReloader {
  // One reload at a time, in the order asked.
  let last: Promise<boolean> = Promise.resolve(true)
  const reload = (reason: string) =>
    (last = last.then(async () => {
      let pair: { key: string; cert: string; source: string }
      try {
        pair = await loadTls(config)
        // Throws when either is not PEM or the key is not the certificate's: nothing has been changed yet.
        tls.createSecureContext({ key: pair.key, cert: pair.cert })
      } catch (err) {
        const error = (err as Error).message
        log.error({ reason, error }, 'TLS certificate not reloaded: the one served so far stays')
        return false
      }
      // The servers were made with the key and certificate alone: the same options, the new pair.
      for (const server of servers) server.setSecureContext({ key: pair.key, cert: pair.cert })
      log.info({ reason, certificate: pair.source }, 'TLS certificate reloaded')
      return true
    }))

  const files = config.tls.certFile && config.tls.keyFile ? [config.tls.certFile, config.tls.keyFile] : []
  let settle: NodeJS.Timeout | null = null
  const changed = (now: fs.Stats, before: fs.Stats) => {
    if (now.mtimeMs === before.mtimeMs && now.ino === before.ino && now.size === before.size) return
    if (settle) clearTimeout(settle)
    settle = setTimeout(() => {
      settle = null
      void reload('file changed')
    }, SETTLE_MS)
  }
  for (const file of files) fs.watchFile(file, { interval: TLS_WATCH_MS, persistent: false }, changed)
  return {
    reload,
    close() {
      for (const file of files) fs.unwatchFile(file, changed)
      if (settle) clearTimeout(settle)
    },
  }
}
