import fs from 'node:fs'
import path from 'node:path'
import vm from 'node:vm'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * What the single-file build (`npm run build`) was made from: every input file, and the bundle itself, with
 * its size and modification time. `id` names this build; its V8 code cache carries it in its file name.
 */
export interface BundleManifest {
  id: string
  /** The bundle (a CommonJS script), relative to the manifest. */
  bundle: string
  /** How the bundle's text is read: `latin1` when it is plain ASCII (the faster read). */
  encoding: 'latin1' | 'utf8'
  /** V8's code cache of the bundle, relative to the manifest. */
  cache: string
  /** [path relative to the manifest, size, mtimeMs] */
  files: [string, number, number][]
}

/** The manifest entry of `file` as it is on disk now. */
export function fileEntry(dir: string, file: string): [string, number, number] {
  const st = fs.statSync(file)
  return [path.relative(dir, file), st.size, st.mtimeMs]
}

/**
 * The bundle's text as V8 compiles it: the body of a CommonJS module function, which also receives the
 * bundle's directory and URL (its modules' `__dirname` and `import.meta.url` are built from them).
 */
export const wrapBundle = (source: string): string =>
  `(function (exports, require, module, __filename, __dirname, __bundleDir, __bundleUrl) {${source}\n})`

export interface LoadedBundle {
  script: vm.Script
  /** Where the code cache of this build belongs. */
  cacheFile: string
  /** Runs the bundle: the command line starts. */
  run(): void
}

/** The manifest, when it exists and every file it lists is unchanged (same size and modification time). */
export function currentManifest(manifestUrl: URL): BundleManifest | null {
  let manifest: BundleManifest
  try {
    manifest = JSON.parse(fs.readFileSync(manifestUrl, 'utf8')) as BundleManifest
  } catch {
    return null
  }
  const dir = path.dirname(fileURLToPath(manifestUrl))
  for (const [file, size, mtimeMs] of manifest.files) {
    const st = fs.statSync(path.resolve(dir, file), { throwIfNoEntry: false })
    if (!st || st.size !== size || st.mtimeMs !== mtimeMs) return null
  }
  return manifest
}

/**
 * The bundle the manifest describes, compiled (from V8's code cache when it fits this Node), when the
 * manifest exists and every file it lists is unchanged (same size and modification time); otherwise null.
 */
export function loadBundle(manifestUrl: URL): LoadedBundle | null {
  const manifest = currentManifest(manifestUrl)
  if (!manifest) return null
  const dir = path.dirname(fileURLToPath(manifestUrl))
  const filename = path.resolve(dir, manifest.bundle)
  const cacheFile = path.resolve(dir, manifest.cache)
  let cachedData: Buffer | undefined
  try {
    cachedData = fs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const source = fs.readFileSync(filename, manifest.encoding)
  const script = new vm.Script(wrapBundle(source), { filename, cachedData })
  return {
    script,
    cacheFile,
    run() {
      const module = { exports: {} }
      const dirname = path.dirname(filename)
      script.runInThisContext()(
        module.exports,
        createRequire(filename),
        module,
        filename,
        dirname,
        dirname,
        pathToFileURL(filename).href,
      )
    },
  }
}

/** Runs the bundle (see loadBundle) and returns true, or returns false and runs nothing. */
export function runBundle(manifestUrl: URL): boolean {
  const bundle = loadBundle(manifestUrl)
  bundle?.run()
  return bundle !== null
}
