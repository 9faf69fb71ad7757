import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import https from 'node:https'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { plainRequest, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { freePort } from './helpers/redis.js'
import { eventually } from './helpers/wait.js'
import { owned } from './helpers/children.js'

// The example proxy configurations of deploy/, run by the real nginx and HAProxy in front of two hostapi instances
// on one database: only addresses, ports and file paths are substituted.

const NGINX = '/usr/sbin/nginx'
const HAPROXY = '/usr/sbin/haproxy'
const missing = [NGINX, HAPROXY].filter((p) => !fs.existsSync(p))
const deploy = (name: string) => fs.readFileSync(new URL(`../deploy/${name}`, import.meta.url), 'utf8')

/** Replaces each `from` (which must occur) by its `to`: the configuration and this test stay in step. */
function substitute(text: string, pairs: [string | RegExp, string][]): string {
  let out = text
  for (const [from, to] of pairs) {
    const next = out.replace(from, to)
    assert.notEqual(next, out, `not in the configuration: ${from}`)
    out = next
  }
  return out
}

/** Resolves once host:port accepts connections (10 s at most). */
async function listening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const connects = () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy()
        resolve(true)
      })
      s.on('error', () => resolve(false))
    })
  await eventually(connects, {
    what: `listening on ${port}`,
    timeoutMs: 10_000,
    failIf: () => child.exitCode !== null && `exited (${child.exitCode}): ${output()}`,
  }).catch((err: Error) => {
    throw new Error(`${err.message}: ${output()}`)
  })
}

function run(cmd: string, args: string[]): { child: ChildProcess; output: () => string } {
  const child = owned(spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }))
  let text = ''
  child.stdout?.on('data', (c: Buffer) => {
    text += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    text += c.toString()
  })
  return { child, output: () => text }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/** One HTTPS request to the proxy from the client address `from` (a loopback address). */
function viaProxy(port: number, p: string, from: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: { status: number; status_description: string } }>((resolve, reject) => {
    https
      .get(
        { host: '127.0.0.1', port, path: p, localAddress: from, headers, agent: false, rejectUnauthorized: false },
        (res) => {
          let text = ''
          res.on('data', (c: Buffer) => {
            text += c.toString()
          })
          res.on('end', () => {
            let body = { status: 0, status_description: text }
            try {
              body = JSON.parse(text)
            } catch {}
            resolve({ status: res.statusCode ?? 0, body })
          })
        },
      )
      .on('error', reject)
  })
}

describe('the proxy configurations of deploy/ in front of two instances', {
  skip: missing.length ? `missing ${missing.join(', ')}` : false,
}, () => {
  let dir: string
  let one: TestApp
  let two: TestApp
  let a: TestAccount
  let whitelisted: string
  const procs: ChildProcess[] = []
  const upstreams: number[] = []

  before(async () => {
    dir = tempDir()
    const env = { HOSTAPI_HTTP_PORT: '0', HOSTAPI_TRUSTED_PROXIES: '127.0.0.1', HOSTAPI_ADMIN_PORT: '0' }
    one = await startTestApp('sqlite', { env })
    two = await startTestApp('sqlite', { env, shareDatabaseWith: one })
    for (const t of [one, two]) upstreams.push(Number(new URL(t.server.httpUrl!).port))
    a = await one.account()
    const user = a.userId
    whitelisted = (await one.ctx.services.iam.createKey(a.accountId, user, { allowedIps: ['127.0.0.3'] })).key
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    )
    fs.writeFileSync(
      path.join(dir, 'combined.pem'),
      fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8') + fs.readFileSync(path.join(dir, 'key.pem'), 'utf8'),
    )
  })
  after(async () => {
    for (const p of procs) await stop(p)
    await two?.close()
    await one?.close()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  /** The checks every proxy must pass, on its public port. */
  async function checks(port: number) {
    // API calls go through, to both instances.
    const served = async () => {
      const n: number[] = []
      for (const t of [one, two]) {
        const m = /^hostapi_http_requests_total\{operation="whoami",method="GET",status="200"\} (\d+)$/m.exec(
          await t.ctx.ops.metrics.text(),
        )
        n.push(Number(m?.[1] ?? 0))
      }
      return n
    }
    const before = await served()
    for (let i = 0; i < 6; i++) {
      const r = await viaProxy(port, '/api/v2/whoami', '127.0.0.3', { 'api-key': a.key })
      assert.equal(r.status, 200, JSON.stringify(r.body))
    }
    const afterwards = await served()
    assert.ok(afterwards[0] > before[0] && afterwards[1] > before[1], `${before} -> ${afterwards}`)
    // hostapi sees the real client's address: a key whitelisted for 127.0.0.3 opens from there, not from 127.0.0.4,
    // and a client cannot name another address in its own X-Forwarded-For.
    assert.equal((await viaProxy(port, '/api/v2/whoami', '127.0.0.3', { 'api-key': whitelisted })).status, 200)
    assert.deepEqual((await viaProxy(port, '/api/v2/whoami', '127.0.0.4', { 'api-key': whitelisted })).body, {
      status: 401,
      status_description: 'Remote IP address is not found in the API key whitelist (127.0.0.4)',
    })
    const spoofed = await viaProxy(port, '/api/v2/whoami', '127.0.0.4', {
      'api-key': whitelisted,
      'x-forwarded-for': '127.0.0.3',
    })
    assert.equal(spoofed.body.status_description, 'Remote IP address is not found in the API key whitelist (127.0.0.4)')
    // The admin API and the metrics are not reachable through the public proxy.
    for (const p of ['/admin/v1/accounts', '/admin/v1/metrics', '/metrics'])
      assert.equal((await viaProxy(port, p, '127.0.0.3')).status, 404, p)
  }

  it('nginx (deploy/nginx.conf)', async () => {
    const port = await freePort()
    const conf = substitute(deploy('nginx.conf'), [
      ['worker_processes auto;', 'worker_processes 1;'],
      [
        'http {\n',
        `http {\n    client_body_temp_path ${dir}/body;\n    proxy_temp_path ${dir}/proxy;\n    fastcgi_temp_path ${dir}/fastcgi;\n    uwsgi_temp_path ${dir}/uwsgi;\n    scgi_temp_path ${dir}/scgi;\n`,
      ],
      ['/var/log/nginx/hostapi.access.log', `${dir}/access.log`],
      ['10.0.0.11:8080', `127.0.0.1:${upstreams[0]}`],
      ['10.0.0.12:8080', `127.0.0.1:${upstreams[1]}`],
      ['listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`],
      ['/etc/ssl/hostapi/cert.pem', `${dir}/cert.pem`],
      ['/etc/ssl/hostapi/key.pem', `${dir}/key.pem`],
    ])
    fs.writeFileSync(path.join(dir, 'nginx.conf'), conf)
    const nginx = run(NGINX, [
      '-p',
      dir,
      '-c',
      path.join(dir, 'nginx.conf'),
      '-g',
      `daemon off; pid ${dir}/nginx.pid; error_log stderr;`,
    ])
    procs.push(nginx.child)
    await listening(port, nginx.child, nginx.output)
    await checks(port)
    // nginx has no active health checks: the instances' plain port answers them (for a monitor, or nginx Plus).
    for (const u of upstreams)
      for (const p of ['/healthz', '/readyz'])
        assert.equal((await plainRequest(`http://127.0.0.1:${u}`, p)).status, 200)
    assert.ok(fs.readFileSync(path.join(dir, 'access.log'), 'utf8').includes('127.0.0.3'))
  })

  it('HAProxy (deploy/haproxy.cfg), whose /readyz checks on the plain port mark both instances up', async () => {
    const port = await freePort()
    const stats = await freePort()
    const cfg = substitute(deploy('haproxy.cfg'), [
      ['bind :443 ssl crt /etc/haproxy/hostapi.pem', `bind 127.0.0.1:${port} ssl crt ${dir}/combined.pem`],
      ['10.0.0.11:8080', `127.0.0.1:${upstreams[0]}`],
      ['10.0.0.12:8080', `127.0.0.1:${upstreams[1]}`],
      ['default-server inter 2s', 'default-server inter 200ms'],
    ])
    // A stats socket of the test's own, to read the health-check state of each server.
    const withStats = `${cfg}\nlisten stats\n    bind 127.0.0.1:${stats}\n    mode http\n    stats enable\n    stats uri /stats\n`
    fs.writeFileSync(path.join(dir, 'haproxy.cfg'), withStats)
    const haproxy = run(HAPROXY, ['-db', '-f', path.join(dir, 'haproxy.cfg')])
    procs.push(haproxy.child)
    await listening(port, haproxy.child, haproxy.output)
    // Both servers pass the /readyz check on the plain port (a 400 there would leave them DOWN).
    let csv = ''
    const bothUp = async () => {
      csv = await new Promise<string>((resolve, reject) => {
        http
          .get(`http://127.0.0.1:${stats}/stats;csv`, { agent: false }, (res) => {
            let text = ''
            res.on('data', (c: Buffer) => {
              text += c.toString()
            })
            res.on('end', () => resolve(text))
          })
          .on('error', reject)
      })
      return csv.split('\n').filter((l) => /^hostapi,hostapi[12],/.test(l) && l.split(',')[17] === 'UP').length === 2
    }
    await eventually(bothUp, { what: 'both servers UP', timeoutMs: 10_000, intervalMs: 100 }).catch(() => undefined)
    const states = csv
      .split('\n')
      .filter((l) => /^hostapi,hostapi[12],/.test(l))
      .map((l) => l.split(',')[17])
    assert.deepEqual(states, ['UP', 'UP'], csv)
    await checks(port)
  })
})
