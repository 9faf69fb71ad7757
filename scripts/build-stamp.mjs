// When the build last compiled, and whether a source changed since: read by the build (scripts/build.mjs, which
// compiles only then with `--if-changed`) and by the tests that start the built command line (test/helpers/process.ts).
// Plain JavaScript: it runs before anything is compiled.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The project's directory. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** Written after a successful tsc, dated when that tsc started: an edit made while it ran counts as newer. */
export const stampFile = path.join(root, 'dist', '.build-stamp')

/** When the last successful tsc started (ms since the epoch), 0 when none has. */
export const builtAt = () => fs.statSync(stampFile, { throwIfNoEntry: false })?.mtimeMs ?? 0

/** The latest modification time of the TypeScript files under `p` (or of `p`, a file). */
export function newest(p) {
  const st = fs.statSync(p, { throwIfNoEntry: false })
  if (!st) return 0
  if (!st.isDirectory()) return st.mtimeMs
  let latest = 0
  for (const entry of fs.readdirSync(p, { withFileTypes: true })) {
    if (entry.isDirectory()) latest = Math.max(latest, newest(path.join(p, entry.name)))
    else if (entry.name.endsWith('.ts')) latest = Math.max(latest, fs.statSync(path.join(p, entry.name)).mtimeMs)
  }
  return latest
}
