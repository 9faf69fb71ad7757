// Part of the container build (Containerfile), after `npm prune --omit=dev`: the command line's bundle runs only
// while every file it was made from has the size and modification time its manifest records (src/cli/bundle.ts),
// and a copy between image layers keeps modification times in whole seconds. This sets each of those files' time
// to its whole second and records that in the manifest, so the image starts from the bundle. A file that is gone or
// changed size fails the build: the bundle would never run in the image. Plain JavaScript: it runs with the
// production dependencies alone.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cliDir = path.join(root, 'dist', 'src', 'cli')
const manifestFile = path.join(cliDir, 'cli.bundle.json')
const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'))
const problems = []
manifest.files = manifest.files.map(([file, size, mtimeMs]) => {
  const full = path.resolve(cliDir, file)
  const st = fs.statSync(full, { throwIfNoEntry: false })
  if (!st || st.size !== size) {
    problems.push(`${file}: ${st ? `size ${st.size}, was ${size}` : 'missing'}`)
    return [file, size, mtimeMs]
  }
  const seconds = Math.floor(st.mtimeMs / 1000)
  fs.utimesSync(full, st.atime, seconds)
  return [file, size, seconds * 1000]
})
if (problems.length) {
  process.stderr.write(`the bundle was made from files the production install lacks:\n  ${problems.join('\n  ')}\n`)
  process.exit(1)
}
fs.writeFileSync(manifestFile, JSON.stringify(manifest))
process.stdout.write(`sealed the bundle's manifest: ${manifest.files.length} files\n`)
