import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import tls from 'node:tls'
import { generateRoot, issueServerCertificate } from '../src/tls.js'
import { tempDir } from './helpers/app.js'
import { lineText, originOf, spawnServer, type ServerProcess } from './helpers/process.js'
import { eventually } from './helpers/wait.js'

// A certificate renewed on disk (certbot, an operator) is served without a restart: on SIGHUP, and by itself when the
// configured files change. Open connections keep answering; a pair that does not load leaves the served one.

/** The SHA-256 fingerprint of the certificate a new TLS connection to `port` is shown. */
function servedTo(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256)
      socket.end()
    })
    socket.on('error', reject)
  })
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256

describe('TLS certificate reload without a restart', () => {
  let dir: string
  let certFile: string
  let keyFile: string
  let server: ServerProcess
  let port: number
  let root: { key: string; cert: string }
  const pairs: { key: string; cert: string }[] = []
  // One keep-alive connection, open from before the first reload to the end, and the certificate it was shown.
  const shown = new WeakMap<object, string>()
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false })
  const overOpenConnection = () =>
    new Promise<{ status: number; reused: boolean; cert: string }>((resolve, reject) => {
      const req = https.get(`https://127.0.0.1:${port}/api/v2/whoami`, { agent, servername: 'localhost' }, (res) => {
        res.resume()
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, cert: shown.get(req.socket!) ?? '' }),
        )
      })
      req.on('socket', (socket) => {
        if (!shown.has(socket))
          socket.once('secureConnect', () =>
            shown.set(socket, (socket as tls.TLSSocket).getPeerCertificate().fingerprint256),
          )
      })
      req.on('error', reject)
    })
  const install = (pair: { key: string; cert: string }) => {
    fs.writeFileSync(keyFile, pair.key)
    fs.writeFileSync(certFile, pair.cert)
  }
  const logged = (pattern: RegExp) => server.lines.filter((l) => pattern.test(lineText(l)))

  before(async () => {
    dir = tempDir()
    certFile = path.join(dir, 'cert.pem')
    keyFile = path.join(dir, 'key.pem')
    root = await generateRoot()
    for (let i = 0; i < 3; i++) pairs.push(await issueServerCertificate(root, ['localhost', '127.0.0.1']))
    install(pairs[0]!)
    server = spawnServer({
      HOSTAPI_DATA_DIR: path.join(dir, 'data'),
      HOSTAPI_HOST: '127.0.0.1',
      HOSTAPI_PORT: '0',
      HOSTAPI_DNS_PORT: '0',
      HOSTAPI_DEMO: '0',
      HOSTAPI_JOBS: '0',
      HOSTAPI_TLS_CERT: certFile,
      HOSTAPI_TLS_KEY: keyFile,
      HOSTAPI_IDLE_TIMEOUT_MS: '600000',
      HOSTAPI_LOG_LEVEL: 'info',
    })
    port = Number(new URL(await originOf(server)).port)
  })
  after(async () => {
    agent.destroy()
    server?.child.kill('SIGTERM')
    await server?.exited
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('SIGHUP serves the new pair on new connections; the open connection still answers', async () => {
    const first = await overOpenConnection()
    assert.equal(first.status, 401)
    assert.equal(first.cert, fingerprint(pairs[0]!.cert))
    install(pairs[1]!)
    server.child.kill('SIGHUP')
    const wanted = fingerprint(pairs[1]!.cert)
    await eventually(async () => (await servedTo(port)) === wanted, {
      what: 'a new connection is shown the new certificate',
    })
    const again = await overOpenConnection()
    assert.deepEqual(again, { status: 401, reused: true, cert: fingerprint(pairs[0]!.cert) })
    assert.equal(server.child.exitCode, null, 'the process was not restarted')
  })

  it('a change of the files is picked up without a signal', async () => {
    install(pairs[2]!)
    const wanted = fingerprint(pairs[2]!.cert)
    await eventually(async () => (await servedTo(port)) === wanted, {
      what: 'a new connection is shown the renewed certificate',
    })
    assert.equal((await overOpenConnection()).reused, true)
  })

  it('a key that is not the certificate’s, or a file that cannot be read, keeps the served pair and logs an error', async () => {
    const served = fingerprint(pairs[2]!.cert)
    const errors = () => logged(/^TLS certificate not reloaded/).length
    // The key of another pair beside the served certificate, noticed by the watch.
    fs.writeFileSync(keyFile, pairs[0]!.key)
    await eventually(async () => errors() >= 1, { what: 'the mismatch is logged' })
    assert.equal(await servedTo(port), served)
    // The certificate gone, on SIGHUP.
    fs.writeFileSync(keyFile, pairs[2]!.key)
    fs.rmSync(certFile)
    const before = errors()
    server.child.kill('SIGHUP')
    await eventually(async () => errors() > before, { what: 'the unreadable file is logged' })
    assert.equal(await servedTo(port), served)
    const line = JSON.parse(logged(/^TLS certificate not reloaded/).at(-1)!) as { level: number; error: string }
    assert.equal(line.level, 50)
    assert.match(line.error, /ENOENT/)
    assert.equal((await overOpenConnection()).status, 401)
  })
})
