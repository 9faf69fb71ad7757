import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

export const run = promisify(execFile)
export const root = path.resolve(new URL('../..', import.meta.url).pathname)
export const tsc = path.join(root, 'node_modules/typescript/bin/tsc')
const clientDir = path.join(root, 'clients/typescript')

/**
 * The typed client as an integrator gets it, packed into `dir`: `npm pack` of a copy of `clients/typescript` (which
 * runs its `prepare`, building dist; a copy, so tests packing at once do not build into one folder), and its
 * dependencies packed from this checkout's node_modules, so an install runs offline. Returns the `dependencies` of a
 * package.json that installs them from the tarballs.
 */
export async function packClient(dir: string): Promise<Record<string, string>> {
  const build = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-client-build-'))
  const npm = { cwd: dir, env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } }
  try {
    for (const name of ['package.json', 'tsconfig.json', 'src'])
      fs.cpSync(path.join(clientDir, name), path.join(build, name), { recursive: true })
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(build, 'node_modules'))
    await run('npm', ['pack', '--pack-destination', dir], { ...npm, cwd: build })
  } finally {
    fs.rmSync(build, { recursive: true, force: true })
  }
  const deps = ['openapi-fetch', 'openapi-typescript-helpers']
  await run(
    'npm',
    ['pack', '--ignore-scripts', '--pack-destination', dir, ...deps.map((d) => path.join(root, 'node_modules', d))],
    npm,
  )
  const tarball = (name: string) => `file:${fs.readdirSync(dir).find((f) => f.startsWith(`${name}-`))}`
  return Object.fromEntries(['hostapi-client', ...deps].map((name) => [name, tarball(name)]))
}

/** `npm install` offline in `dir` (its package.json names the packed tarballs). */
export async function installOffline(dir: string): Promise<void> {
  const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' }
  await run('npm', ['install', '--offline', '--ignore-scripts'], { cwd: dir, env })
}
