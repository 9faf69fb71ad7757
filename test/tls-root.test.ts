import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { after, before, describe, it } from 'node:test'
import { createHostapiAdminClient, createHostapiClient } from '../clients/typescript/src/index.js'
import { loadTls } from '../src/tls.js'
import { startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { cliArgv } from './helpers/process.js'

// The local TLS as an integrator meets it: a root generated once into the data folder signs the server's
// certificate; `hostapi cert` names the root; a client given that root verifies the server and gets through.
const run = promisify(execFile)

describe('local TLS: one root to trust', () => {
  let t: TestApp
  let a: TestAccount
  let rootFile: string
  before(async () => {
    t = await startTestApp('sqlite')
    a = await t.account()
    rootFile = path.join(t.config.dataDir, 'tls-ca.pem')
  })
  after(() => t.close())

  it('the server certificate is signed by a root CA kept in the data folder, its key owner-only', () => {
    const root = new X509Certificate(fs.readFileSync(rootFile))
    const leaf = new X509Certificate(fs.readFileSync(path.join(t.config.dataDir, 'tls-cert.pem')))
    assert.equal(root.ca, true)
    assert.equal(leaf.ca, false)
    assert.ok(leaf.verify(root.publicKey), 'the root signed the server certificate')
    assert.equal(leaf.checkHost('localhost'), 'localhost')
    assert.equal(leaf.checkIP('127.0.0.1'), '127.0.0.1')
    assert.equal(fs.statSync(path.join(t.config.dataDir, 'tls-ca-key.pem')).mode & 0o077, 0)
    // What `hostapi serve` prints at start names the root to trust.
    assert.ok(t.server.tlsSource.includes(`signed by the local root ${rootFile}`), t.server.tlsSource)
  })

  it('a client with `ca` reaches the server with verification on; without it the certificate is refused', async () => {
    const ca = fs.readFileSync(rootFile, 'utf8')
    const api = createHostapiClient({ baseUrl: t.origin, apiKey: a.key, ca })
    const { data } = await api.GET('/api/v2/whoami')
    assert.equal(data.status, 200)
    const admin = createHostapiAdminClient({ baseUrl: t.origin, token: 'adm_wrong', ca, retries: 0 })
    await assert.rejects(admin.GET('/jobs'), { status: 401 })
    // The same call with the system's roots only fails verification: `ca` is what made it pass.
    const untrusting = createHostapiClient({ baseUrl: t.origin, apiKey: a.key, retries: 0 })
    await assert.rejects(untrusting.GET('/api/v2/whoami'), (err: Error) =>
      /certificate/i.test(String((err.cause as Error | undefined)?.message ?? err.message)),
    )
  })

  it('`hostapi cert` prints the root path and keeps the root; a restart reuses the server certificate', async () => {
    const before = fs.readFileSync(rootFile, 'utf8')
    const env = { PATH: process.env.PATH ?? '', HOSTAPI_DATA_DIR: t.config.dataDir, HOSTAPI_LOG_LEVEL: 'silent' }
    const { stdout } = await run(process.execPath, [...cliArgv, 'cert'], { env })
    assert.equal(stdout, `${rootFile}\n`)
    assert.equal(fs.readFileSync(rootFile, 'utf8'), before)
    const cert = fs.readFileSync(path.join(t.config.dataDir, 'tls-cert.pem'), 'utf8')
    assert.equal((await loadTls(t.config)).cert, cert)
  })

  it('a server certificate the root did not sign (an older self-signed one) is issued again by the root', async () => {
    const dir = fs.mkdtempSync(path.join(t.config.dataDir, 'old-'))
    const config = { ...t.config, dataDir: dir }
    const first = await loadTls(config)
    // A new root (as when upgrading from the self-signed certificate): the kept certificate no longer verifies.
    fs.rmSync(path.join(dir, 'tls-ca.pem'))
    fs.rmSync(path.join(dir, 'tls-ca-key.pem'))
    const second = await loadTls(config)
    assert.notEqual(second.cert, first.cert)
    const root = new X509Certificate(fs.readFileSync(path.join(dir, 'tls-ca.pem')))
    assert.ok(new X509Certificate(second.cert).verify(root.publicKey))
  })
})
