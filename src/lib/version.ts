import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The version of the package.json named hostapi in `dir` or a folder above it; `unknown` when there is none. */
function findVersion(dir: string): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      name?: unknown
      version?: unknown
    }
    if (pkg.name === 'hostapi' && typeof pkg.version === 'string') return pkg.version
  } catch {}
  const up = path.dirname(dir)
  return up === dir ? 'unknown' : findVersion(up)
}

let cached: string | undefined

/**
 * hostapi's release: the version in its package.json, found from this file upwards (the same from the sources and
 * from the built `dist/`).
 */
export function hostapiVersion(): string {
  cached ??= findVersion(path.dirname(fileURLToPath(import.meta.url)))
  return cached
}
