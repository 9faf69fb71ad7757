import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { request, tempDir } from './helpers/app.js'
import { spawnServer, type ServerProcess } from './helpers/process.js'
import { loadBundle } from '../src/cli/bundle.js'
import { INSPECTOR_FILES } from '../src/http/inspector.js'

const root = new URL('..', import.meta.url).pathname
const KEY = 'bundleBundleBundleBundle0001'

/** A new Ed25519 public key in OpenSSH format. */
function newSshKey(): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32)
  const field = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b])
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]).toString('base64')} bundle`
}

// `npm start` runs the single-file build. The suite's server processes run it too when the build is current
// (test/helpers/process.ts; `npm test` builds first); this builds when the sources changed, as `npm start` does,
// and never in full: other suites start processes from the build meanwhile.
describe('the single-file build (npm run build, then npm start)', () => {
  let dataDir: string
  let server: ServerProcess
  let origin: string
  const call = (method: string, p: string, body?: unknown) =>
    request(origin, method, p, { key: KEY, ...(body === undefined ? {} : { body }) })

  before(async () => {
    await promisify(execFile)('node', ['scripts/build.mjs', '--if-changed'], { cwd: root, timeout: 300_000 })
    assert.ok(
      loadBundle(new URL('dist/src/cli/cli.bundle.json', `file://${root}`)),
      'the fresh build is the one main.js runs',
    )
    dataDir = tempDir()
    server = spawnServer(
      {
        HOSTAPI_DATA_DIR: dataDir,
        HOSTAPI_PORT: '0',
        HOSTAPI_DNS_PORT: '0',
        HOSTAPI_DEMO_KEY: KEY,
        HOSTAPI_JOBS: '0',
        HOSTAPI_ZONE_INLINE_BYTES: '0',
      },
      { script: path.join(root, 'dist/src/cli/main.js') },
    )
    const [, base] = await server.waitFor(/^hostapi listening on (\S+)/)
    origin = base.replace(/\/api\/v2$/, '')
  })
  after(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('answers the API, its errors and its documents', async () => {
    assert.equal((await call('GET', '/whoami')).body.status, 200)
    assert.deepEqual((await call('GET', '/domains/not a domain/dns')).body.status, 400)
    assert.deepEqual((await call('PATCH', '/domains/demo-shop.nl/dns', { record: { type: 'TXT' } })).body, {
      status: 400,
      status_description: 'Invalid DNS record TXT @: value is required (null deletes the record set)',
    })
    assert.equal((await call('POST', '/whoami')).body.status_description, 'Wrong request method')
    assert.equal((await call('GET', '/nothing-here')).body.status_description, 'Endpoint not found')
    const doc = await request(origin, 'GET', '/api/v2/openapi.json')
    assert.equal(JSON.parse(doc.text).openapi, '3.1.0')
    const docs = await request(origin, 'GET', '/docs/')
    assert.equal(docs.status, 200)
    assert.match(docs.text, /<html/i)
  })

  it("serves the sandbox inspector's files (the demo is a sandbox), which the build copies beside the compiled code", async () => {
    for (const name of Object.keys(INSPECTOR_FILES)) {
      const res = await request(origin, 'GET', `/sandbox${name === 'index.html' ? '' : `/${name}`}`)
      assert.equal(res.status, 200, name)
      assert.equal(res.text, fs.readFileSync(path.join(root, 'src', 'inspector', name), 'utf8'), name)
    }
  })

  it('parses a zone import in the worker thread (its own compiled file beside the bundle)', async () => {
    const ok = await call('PUT', '/domains/demo-shop.nl/dns/zone?test=1', { zone: 'www 300 IN A 192.0.2.1\n' })
    assert.deepEqual(ok.body, { status: 200, status_description: 'DNS successfully updated' })
    const bad = await call('PUT', '/domains/demo-shop.nl/dns/zone?test=1', { zone: 'www 300 IN A 300.1.1.1\n' })
    assert.equal(bad.body.status, 400)
    assert.match(bad.body.status_description, /^Invalid zone file: line 1: /)
  })

  it('loads the packages kept outside the bundle when a request needs them', async () => {
    const invoices = await call('GET', '/account/invoices')
    const nr = invoices.body.data.invoices[0].invoice_nr
    const pdf = await call('GET', `/account/invoices/${nr}/pdf`)
    assert.equal(pdf.status, 200)
    assert.ok(pdf.text.startsWith('%PDF'), 'an invoice PDF (pdfkit)')
    const csr = await call('POST', '/certificates/csr', {
      common_name: 'www.example.nl',
      organization: 'Demo',
      email: 'a@example.nl',
      country: 'NL',
      state: 'NH',
      locality: 'Amsterdam',
      key_type: 'ec',
    })
    assert.match(csr.body.data.csr, /BEGIN CERTIFICATE REQUEST/, 'a CSR (@peculiar/x509)')
    const key = await call('POST', '/vps/ssh-keys', { name: 'bundle', public_key: newSshKey() })
    assert.equal(key.body.status, 200, `an SSH key (sshpk): ${key.text}`)
    const ticket = await call('POST', '/account/tickets', {
      subject: 'Bundle',
      message: '<p>Hello<script>alert(1)</script></p>',
      department: 'support',
    })
    assert.equal(ticket.body.status, 200, 'a ticket (sanitize-html)')
    assert.doesNotMatch(JSON.stringify(ticket.body), /<script/)
  })

  it('builds nothing before a start while the sources are unchanged, and no bundle while its inputs match', async () => {
    const manifest = path.join(root, 'dist/src/cli/cli.bundle.json')
    const stamp = path.join(root, 'dist/.build-stamp')
    const before = [fs.statSync(manifest).mtimeMs, fs.statSync(stamp).mtimeMs]
    const prestart = () => promisify(execFile)('node', ['scripts/build.mjs', '--if-changed'], { cwd: root })
    assert.equal((await prestart()).stdout, '')
    assert.deepEqual([fs.statSync(manifest).mtimeMs, fs.statSync(stamp).mtimeMs], before)
    // A source saved again without a change: tsc runs (incrementally), emits nothing new, so the bundle stays.
    const source = path.join(root, 'src/cli/cli.ts')
    const now = new Date()
    fs.utimesSync(source, now, now)
    assert.match((await prestart()).stdout, /sources changed: compiling/)
    assert.equal(fs.statSync(manifest).mtimeMs, before[0])
    assert.ok(fs.statSync(stamp).mtimeMs > before[1])
  })
})
