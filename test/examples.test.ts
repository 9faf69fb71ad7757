// The integrator's example suite (examples/integration) run as an integrator runs it: the typed client packed and
// installed from its tarball into a copy of the example project, compiled there strictly, and the compiled suite run
// with `node --test` against a hostapi started in demo mode (the sandbox on, an admin token, the local root to trust).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { tempDir } from './helpers/app.js'
import { installOffline, packClient, root, run, tsc } from './helpers/client-package.js'
import { spawnServer, type ServerProcess } from './helpers/process.js'

const example = path.join(root, 'examples/integration')

describe('the integration example (examples/integration) against a demo instance', () => {
  let project: string
  let dataDir: string
  let server: ServerProcess

  before(async () => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-example-'))
    for (const name of ['tsconfig.json', 'src'])
      fs.cpSync(path.join(example, name), path.join(project, name), { recursive: true })
    // The example's package.json, its dependencies from the packed tarballs (the install runs offline); the compiler
    // and Node's types are this checkout's.
    const pkg = JSON.parse(fs.readFileSync(path.join(example, 'package.json'), 'utf8'))
    const dependencies = await packClient(project)
    assert.deepEqual(Object.keys(pkg.dependencies), ['hostapi-client'], 'the example depends on the client alone')
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ ...pkg, dependencies, devDependencies: {} }))
    await installOffline(project)
    fs.symlinkSync(path.join(root, 'node_modules/@types'), path.join(project, 'node_modules/@types'))
    dataDir = tempDir()
    server = spawnServer({ HOSTAPI_DATA_DIR: dataDir, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0' })
  })
  after(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    fs.rmSync(project, { recursive: true, force: true })
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('compiles strictly against the installed client', async () => {
    const out = await run(process.execPath, [tsc, '-p', project], { cwd: project }).then(
      (r) => r.stdout,
      (e: { stdout: string }) => e.stdout,
    )
    assert.equal(out.trim(), '', out)
  })

  it('passes: reset with its seed, the clock, a registry refusal and an event sent on demand', async () => {
    const [, url] = await server.waitFor(/hostapi listening on (https:\/\/[^\s"]+)/, 60_000)
    // Without this runner's NODE_TEST_CONTEXT, the example's `node --test` reports in text as it does for its author.
    const { NODE_TEST_CONTEXT: _, ...parentEnv } = process.env
    const env = {
      ...parentEnv,
      HOSTAPI_URL: url.replace(/\/api\/v2$/, ''),
      HOSTAPI_ADMIN_TOKEN: fs.readFileSync(path.join(dataDir, 'demo-admin-token'), 'utf8').trim(),
      HOSTAPI_CA: path.join(dataDir, 'tls-ca.pem'),
    }
    const result = await run(process.execPath, ['--test', 'dist/provisioning.test.js'], { cwd: project, env }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: `${e.stdout}\n${e.stderr}` }),
    )
    assert.equal(result.code, 0, result.out)
    assert.match(result.out, /# pass 3\b/, result.out)
  })
})
