// The build: tsc (incremental), then the single-file bundle of the command line (scripts/bundle.ts). With
// `--if-changed` (what `npm start` runs first) a start with unchanged sources builds nothing: tsc runs only when a
// file it compiles, or its configuration, changed since the last build, and the bundle is made again only when a
// file it was made from changed (its manifest, see src/cli/bundle.ts). Plain JavaScript: it runs before anything
// is compiled.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { builtAt, newest, root, stampFile } from './build-stamp.mjs'

const dist = path.join(root, 'dist')
const inputs = ['src', 'scripts', 'test', 'bench', 'clients', 'tsconfig.json', 'package.json', 'package-lock.json']

const run = (args) => {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
}

const ifChanged = process.argv.includes('--if-changed')
const built = builtAt()
if (!ifChanged || Math.max(...inputs.map((p) => newest(path.join(root, p)))) > built) {
  const started = new Date()
  if (ifChanged) process.stdout.write('sources changed: compiling (tsc, incremental)\n')
  run([createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'])
  fs.writeFileSync(stampFile, '')
  fs.utimesSync(stampFile, started, started)
}

// The sandbox inspector's page (src/inspector: HTML, CSS, ES modules) is served from files beside the compiled code.
fs.cpSync(path.join(root, 'src', 'inspector'), path.join(dist, 'src', 'inspector'), { recursive: true })

const { currentManifest } = await import(pathToFileURL(path.join(dist, 'src', 'cli', 'bundle.js')).href)
if (!ifChanged || !currentManifest(pathToFileURL(path.join(dist, 'src', 'cli', 'cli.bundle.json')))) {
  run([path.join(dist, 'scripts', 'bundle.js')])
}
