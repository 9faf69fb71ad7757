// Spawned by scripts/bundle.ts with a scratch data directory, twice: `seed` runs `hostapi serve` from the bundle
// once so that the directory holds a database with the demo data; `train` runs it again (the usual start: an
// existing database), asks whoami once, stops, and on exit writes V8's code cache of all that ran. A start from
// the bundle then finds the functions of a start and of a first answer already compiled.
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { loadBundle } from '../src/cli/bundle.js'
import { lineText } from '../src/lib/log-line.js'

const here = path.dirname(new URL(import.meta.url).pathname)
const root = fs.existsSync(path.join(here, '..', 'package.json'))
  ? path.resolve(here, '..')
  : path.resolve(here, '..', '..')
const cliDir = path.join(root, 'dist', 'src', 'cli')
const bundle = loadBundle(pathToFileURL(path.join(cliDir, 'cli.bundle.json')))
if (!bundle) throw new Error('no current bundle to train')

const [dataDir, mode] = process.argv.slice(2)
if (!dataDir || (mode !== 'seed' && mode !== 'train')) throw new Error('usage: train-bundle.js <data dir> seed|train')
const key = 'codeCacheTrainingKey0001'
for (const name of Object.keys(process.env))
  if (/^(HOSTAPI_|DATABASE_URL$|REDIS_URL$)/.test(name)) delete process.env[name]
Object.assign(process.env, {
  HOSTAPI_DATA_DIR: dataDir,
  HOSTAPI_HOST: '127.0.0.1',
  HOSTAPI_PORT: '0',
  HOSTAPI_DNS_PORT: '0',
  HOSTAPI_WORKERS: '1',
  HOSTAPI_DEMO_KEY: key,
  HOSTAPI_JOBS: '0',
  HOSTAPI_LOG_LEVEL: 'warn',
})
process.argv = [process.argv[0], path.join(cliDir, 'main.js'), 'serve']

let trained = false
process.on('exit', () => {
  if (trained && mode === 'train') fs.writeFileSync(bundle.cacheFile, bundle.script.createCachedData())
})
const fail = (why: string) => {
  process.stderr.write(`code cache training: ${why}\n`)
  process.exit(1)
}
setTimeout(() => fail('no answer within 60 s'), 60_000).unref()

// The server announces its URL on stdout; it is read there, not shown.
const write = process.stdout.write.bind(process.stdout)
process.stdout.write = ((chunk: string | Uint8Array) => {
  const url = /^hostapi listening on (\S+)/.exec(lineText(String(chunk).trim()))?.[1]
  if (url) whoami(url)
  return true
}) as typeof process.stdout.write

function whoami(url: string) {
  https
    .get(`${url}/whoami`, { headers: { 'API-Key': key }, rejectUnauthorized: false }, (res) => {
      res.resume()
      res.on('end', () => {
        if (res.statusCode !== 200) return fail(`whoami answered ${res.statusCode}`)
        trained = true
        if (mode === 'train') write('code cache trained\n')
        process.kill(process.pid, 'SIGTERM')
      })
    })
    .on('error', (err) => fail(err.message))
}

bundle.run()
