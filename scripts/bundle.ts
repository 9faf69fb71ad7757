// Part of `npm run build`, after tsc: writes the compiled command line (dist/src/cli/cli.js and every module it
// imports, packages included) as one CommonJS script, dist/src/cli/cli.bundle.cjs, with V8's code cache of it and
// a manifest of what it was made from. dist/src/cli/main.js runs the bundle while the manifest still matches the
// files on disk (see src/cli/bundle.ts).
import { spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import vm from 'node:vm'
import { build, transformSync, type Plugin } from 'esbuild'
import { fileEntry, wrapBundle, type BundleManifest } from '../src/cli/bundle.js'

// Runs from scripts/ (tsx) or dist/scripts/ (compiled): the root is where package.json is.
const here = path.dirname(new URL(import.meta.url).pathname)
const root = fs.existsSync(path.join(here, '..', 'package.json'))
  ? path.resolve(here, '..')
  : path.resolve(here, '..', '..')
const cliDir = path.join(root, 'dist', 'src', 'cli')
const entry = path.join(cliDir, 'cli.js')
const outfile = path.join(cliDir, 'cli.bundle.cjs')
const manifestFile = path.join(cliDir, 'cli.bundle.json')

/**
 * Loaded from node_modules at run time, not bundled: native code (better-sqlite3, pg-native), pdfkit (its
 * fonts are files beside its code, and it is loaded only when a request needs it), piscina (it starts its
 * worker threads from a file beside its code; the zone worker is dist/src/modules/domains/dns/zone.worker.js), and the other packages
 * loaded only when a request or a setting needs them (kept out so a start does not compile them).
 */
const external = [
  'better-sqlite3',
  'pg-native',
  'pdfkit',
  'piscina',
  '@peculiar/x509',
  'reflect-metadata',
  'sanitize-html',
  'sshpk',
  'ioredis',
  'pg',
]

/**
 * The packages only a development install has (package-lock.json marks them `dev`), such as the supports-color a
 * bundled package tries to load: left out of the bundle and out of its manifest, so the bundle still runs after
 * `npm prune --omit=dev` (the container image) and whoever asks for one at run time finds it, or not, as without
 * the bundle.
 */
function devOnlyPackages(): string[] {
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>
  }
  const name = (key: string) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length)
  const entries = Object.entries(lock.packages).filter(([key]) => key.includes('node_modules/'))
  const production = new Set(entries.filter(([, p]) => !p.dev).map(([key]) => name(key)))
  return [...new Set(entries.filter(([, p]) => p.dev).map(([key]) => name(key)))].filter((n) => !production.has(n))
}

/**
 * A module in the bundle that reads files beside its own code (the docs page's assets, for one) gets its own
 * `__dirname` and `__filename`: where it lies in node_modules, relative to the bundle. The manifest lists every
 * bundled package, so the bundle runs only while they are where they were.
 */
const ownDirname: Plugin = {
  name: 'own-dirname',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, (args) => {
      const code = fs.readFileSync(args.path, 'utf8')
      if (!/\b__(dirname|filename)\b/.test(code)) return undefined
      const rel = (p: string) => JSON.stringify(path.relative(cliDir, p))
      const prelude =
        `var __dirname = require('node:path').join(__bundleDir, ${rel(path.dirname(args.path))}), ` +
        `__filename = require('node:path').join(__bundleDir, ${rel(args.path)});`
      return { contents: prelude + code, loader: 'js', resolveDir: path.dirname(args.path) }
    })
  },
}

// A stale manifest must never describe a new bundle: it goes first and is written again last.
fs.rmSync(manifestFile, { force: true })
for (const f of fs.readdirSync(cliDir)) if (/^cli\.bundle\..*\.cache$/.test(f)) fs.rmSync(path.join(cliDir, f))
// The bundle runs as a vm.Script, where import() has no loader: everything it loads later it loads with require.
const result = await build({
  absWorkingDir: root,
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: [...external, ...devOnlyPackages()],
  // Node's resolution: no `module` condition or field (those name builds meant for bundlers).
  conditions: [],
  mainFields: ['main'],
  // No keepNames: it sets the name of every function expression each time one is created (closures made per
  // request included), which cost about a quarter of the requests/s of a small authenticated answer.
  keepNames: false,
  charset: 'ascii',
  sourcemap: true,
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
  plugins: [ownDirname],
  // The bundle's URL and directory come with the function it runs in (see wrapBundle).
  define: { 'import.meta.url': '__bundleUrl' },
})

// esbuild escapes every non-ASCII character outside comments. Replacing those left in comments leaves the
// program unchanged (checked: both texts minify to the same code) and makes the text ASCII, which reads as
// latin1, several times faster than UTF-8.
let source = fs.readFileSync(outfile, 'utf8')
let encoding: BundleManifest['encoding'] = 'utf8'
const ascii = source.replace(/[^\x00-\x7f]/g, '?')
const minified = (text: string) =>
  transformSync(text, { minifyWhitespace: true, legalComments: 'none', charset: 'ascii' }).code
if (ascii === source || minified(ascii) === minified(source)) {
  source = ascii
  encoding = 'latin1'
  fs.writeFileSync(outfile, source, 'latin1')
}
const id = crypto.createHash('sha256').update(source).digest('hex').slice(0, 16)
const cache = `cli.bundle.${id}.cache`
// A first code cache from compiling alone; the training run below replaces it with a fuller one.
fs.writeFileSync(path.join(cliDir, cache), new vm.Script(wrapBundle(source), { filename: outfile }).createCachedData())

if (/\bimport\(/.test(source.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '')))
  throw new Error('the bundle must not use import()')

const inputs = Object.keys(result.metafile.inputs).map((p) => path.resolve(root, p))
// A package is represented by its package.json (an install or update rewrites it), the project's own modules each.
const packageOf = (file: string) => /^(.*[\\/]node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(file)?.[1]
const packages = new Set(inputs.map(packageOf).filter((p) => p !== undefined))
const watched = [
  outfile,
  ...inputs.filter((file) => !packageOf(file)),
  ...[...packages].map((p) => path.join(p, 'package.json')),
]
const manifest: BundleManifest = {
  id,
  bundle: path.basename(outfile),
  encoding,
  cache,
  files: watched.map((file) => fileEntry(cliDir, file)),
}
fs.writeFileSync(manifestFile, JSON.stringify(manifest))
process.stdout.write(
  `${path.relative(root, outfile)}: ${inputs.length} files from ${packages.size} packages, ${(source.length / 1e6).toFixed(1)} MB\n`,
)

// The training: a start on an existing database and one answer, whose compiled functions go into the code cache.
const trainDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-train-'))
try {
  for (const mode of ['seed', 'train']) {
    const run = spawnSync(process.execPath, [path.join(root, 'dist', 'scripts', 'train-bundle.js'), trainDir, mode], {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 120_000,
    })
    if (run.status !== 0) {
      process.stderr.write('code cache training failed; the bundle keeps the cache of its compilation alone\n')
      break
    }
  }
} finally {
  fs.rmSync(trainDir, { recursive: true, force: true })
}
