import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type SqliteDatabase from 'better-sqlite3'
import type { Logger } from 'pino'

/** How often the checkpoint thread looks for commits to copy into the database file. */
export const CHECKPOINT_EVERY_MS = 250

/** SQLite's own default: a commit that leaves this many pages in the log checkpoints it, inside that commit. */
const AUTOCHECKPOINT_PAGES = 1000

// The thread: its own connection to the file; after any commit by another connection (data_version moved), a
// PASSIVE checkpoint, which copies what no reader still needs and waits for nobody.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.module)
const db = new Database(workerData.file, { fileMustExist: true })
let seen = null
const timer = setInterval(() => {
  try {
    const version = db.pragma('data_version', { simple: true })
    if (version === seen) return
    seen = version
    db.pragma('wal_checkpoint(PASSIVE)')
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) })
  }
}, workerData.everyMs)
parentPort.on('message', (m) => {
  if (m !== 'stop') return
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

/**
 * Checkpoints of SQLite's write-ahead log made by a thread of their own. SQLite checkpoints inside the commit that
 * fills the log past 1,000 pages: the copy into the database file and its fsync then run in the synchronous commit,
 * on the event loop, holding every request of the process (40 ms for a commit of 50,000 records here). With this,
 * `sqlite`'s commits never checkpoint (`wal_autocheckpoint = 0`) and the thread copies the log every
 * CHECKPOINT_EVERY_MS after a commit. Should the thread fail, the connection checkpoints as SQLite does by default.
 */
export function checkpointInThread(
  sqlite: SqliteDatabase.Database,
  file: string,
  log?: Logger,
): { stop(): Promise<void> } {
  const worker = new Worker(THREAD, {
    eval: true,
    workerData: {
      file,
      module: createRequire(import.meta.url).resolve('better-sqlite3'),
      everyMs: CHECKPOINT_EVERY_MS,
    },
  })
  worker.unref()
  let stopping = false
  sqlite.pragma('wal_autocheckpoint = 0')
  const fallBack = (why: string) => {
    if (stopping || !sqlite.open) return
    log?.warn({ why }, 'the SQLite checkpoint thread failed: commits checkpoint the log themselves')
    sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
  }
  worker.on('message', (m: { error?: string }) => {
    if (m.error) log?.warn({ err: m.error }, 'SQLite checkpoint failed')
  })
  worker.on('error', (err) => fallBack(err.message))
  worker.on('exit', (code) => fallBack(`exited with ${code}`))
  return {
    async stop() {
      if (stopping) return
      stopping = true
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
      worker.postMessage('stop')
      const timer = setTimeout(() => void worker.terminate(), 2000)
      await exited
      clearTimeout(timer)
    },
  }
}
