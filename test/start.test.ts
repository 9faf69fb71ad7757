import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import Database from 'better-sqlite3'
import { request, tempDir } from './helpers/app.js'
import { cliArgv, spawnServer } from './helpers/process.js'

// A pseudo-terminal for the start, from util-linux's script(1).
const canFakeTerminal = process.platform === 'linux' && fs.existsSync('/usr/bin/script')

describe('hostapi serve (the demo start)', () => {
  it('seeds a demo account on an empty database, prints the demo key, and serves it over HTTPS', async () => {
    const dataDir = tempDir()
    const server = spawnServer({ HOSTAPI_DATA_DIR: dataDir, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0' })
    try {
      const [, url] = await server.waitFor(/^hostapi listening on (https:\/\/\S+)/)
      await server.waitFor(/^Admin API: \S+ \(token: npx hostapi admin token create\)/)
      const [, key] = await server.waitFor(/^Demo API key: (\S+)$/)
      const [, subKey] = await server.waitFor(/^Demo sub-user API key \(domains only\): (\S+)$/)
      const [, adminToken] = await server.waitFor(/^Demo admin token: (adm_\S+)$/)
      const origin = url.replace(/\/api\/v2$/, '')
      const admin = { headers: { authorization: `Bearer ${adminToken}` } }
      assert.equal((await request(origin, 'GET', '/admin/v1/accounts', admin)).status, 200)
      assert.equal((await request(origin, 'GET', '/admin/v1/accounts')).status, 401)
      const who = await request(origin, 'GET', '/api/v2/whoami', { key })
      assert.equal(who.status, 200)
      assert.equal((await request(origin, 'GET', '/api/v2/domains', { key: subKey })).status, 200)
      assert.equal(
        (await request(origin, 'GET', '/api/v2/vps', { key: subKey })).body.status_description,
        'No access to this VPS',
      )
      assert.deepEqual(Object.keys(who.body.data), ['ip', 'customer_number'])
      assert.equal(who.body.data.ip, '127.0.0.1')
      assert.ok(fs.existsSync(`${dataDir}/tls-cert.pem`) && fs.existsSync(`${dataDir}/hostapi.db`))

      server.child.kill('SIGTERM')
      assert.deepEqual(await server.exited, { code: 0, signal: null })

      // A second start finds the data, seeds nothing more and shows the same key again.
      const again = spawnServer({ HOSTAPI_DATA_DIR: dataDir, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0' })
      try {
        const [, again_key] = await again.waitFor(/^Demo API key: (\S+)$/)
        assert.equal(again_key, key)
        const [, againSubKey] = await again.waitFor(/^Demo sub-user API key \(domains only\): (\S+)$/)
        assert.equal(againSubKey, subKey)
        const [, againAdmin] = await again.waitFor(/^Demo admin token: (\S+)$/)
        assert.equal(againAdmin, adminToken)
      } finally {
        again.child.kill('SIGTERM')
        await again.exited
      }
    } finally {
      server.child.kill('SIGKILL')
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('uses HOSTAPI_DEMO_KEY as the demo key', async () => {
    const dataDir = tempDir()
    const fixed = 'fixedDemoKeyForIntegrationTests01'
    const server = spawnServer({
      HOSTAPI_DATA_DIR: dataDir,
      HOSTAPI_PORT: '0',
      HOSTAPI_DNS_PORT: '0',
      HOSTAPI_DEMO_KEY: fixed,
    })
    try {
      const [, url] = await server.waitFor(/^hostapi listening on (https:\/\/\S+)/)
      await server.waitFor(new RegExp(`^Demo API key: ${fixed}$`))
      assert.equal((await request(url.replace(/\/api\/v2$/, ''), 'GET', '/api/v2/whoami', { key: fixed })).status, 200)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('stops with one line naming the variable when a port is in use', async () => {
    const dataDir = tempDir()
    const busy = net.createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const port = String((busy.address() as net.AddressInfo).port)
    try {
      for (const [variable, env] of [
        ['HOSTAPI_PORT', { HOSTAPI_PORT: port, HOSTAPI_DNS_PORT: '0' }],
        ['HOSTAPI_ADMIN_PORT', { HOSTAPI_PORT: '0', HOSTAPI_ADMIN_PORT: port, HOSTAPI_DNS_PORT: '0' }],
        ['HOSTAPI_HTTP_PORT', { HOSTAPI_PORT: '0', HOSTAPI_HTTP_PORT: port, HOSTAPI_DNS_PORT: '0' }],
        ['HOSTAPI_DNS_PORT', { HOSTAPI_PORT: '0', HOSTAPI_DNS_HOST: '127.0.0.1', HOSTAPI_DNS_PORT: port }],
      ] as const) {
        const server = spawnServer({ HOSTAPI_DATA_DIR: dataDir, HOSTAPI_HOST: '127.0.0.1', HOSTAPI_DEMO: '0', ...env })
        const { code } = await server.exited
        assert.equal(code, 2, variable)
        assert.match(server.startError(), new RegExp(`${port}.*${variable}`))
      }
    } finally {
      busy.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('writes readable log lines on a terminal and JSON lines elsewhere; HOSTAPI_DEMO=0 seeds nothing', async () => {
    const dataDir = tempDir()
    fs.chmodSync(dataDir, 0o755)
    const env = { HOSTAPI_DATA_DIR: dataDir, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0', HOSTAPI_DEMO: '0' }
    try {
      // script(1) runs the start on a pseudo-terminal; the data directory's mode draws a warning at start.
      const cmd = [process.execPath, ...cliArgv, 'serve'].join(' ')
      // Without script(1) the first start is piped too: the checks of HOSTAPI_DEMO=0 still run.
      const first = canFakeTerminal
        ? spawnServer(env, { argv: ['script', '-qfec', cmd, '/dev/null'] })
        : spawnServer(env)
      // The demo data is seeded before the server listens, and its key printed right after the admin API line.
      await first.waitFor(/^Admin API: /)
      await first.waitFor(/^hostapi listening on /)
      const db = new Database(`${dataDir}/hostapi.db`, { readonly: true })
      try {
        assert.deepEqual(db.prepare('select count(*) as n from accounts').get(), { n: 0 })
      } finally {
        db.close()
      }
      assert.ok(!fs.existsSync(`${dataDir}/demo-api-key`))
      await first.stop()
      // Once the process has ended, `lines` holds everything it printed.
      assert.ok(!first.lines.some((l) => l.startsWith('Demo API key') || l.startsWith('Demo admin token')))
      assert.ok(!fs.existsSync(`${dataDir}/demo-admin-token`))
      if (canFakeTerminal) {
        const warning = first.lines.find((l) => l.includes('the data directory is open'))
        assert.match(warning ?? '', /^\d\d:\d\d:\d\d WARN {2}the data directory is open .* dataDir=/)
        assert.ok(!first.lines.some((l) => l.startsWith('{')), first.lines.join('\n'))
      }

      const piped = spawnServer(env)
      await piped.waitFor(/^hostapi listening on /)
      piped.child.kill('SIGTERM')
      await piped.exited
      const json = piped.lines.find((l) => l.includes('the data directory is open'))
      assert.equal(JSON.parse(json ?? '{}').level, 40)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('lists every configuration problem at once and exits 2', async () => {
    const server = spawnServer({ HOSTAPI_PORT: 'eighty', HOSTAPI_RATE_LIMIT: '0', REDIS_URL: 'http://x' })
    const { code } = await server.exited
    assert.equal(code, 2)
    for (const name of ['HOSTAPI_PORT', 'HOSTAPI_RATE_LIMIT', 'REDIS_URL'])
      assert.match(server.stderr(), new RegExp(name))
    assert.doesNotMatch(server.stderr(), /\n\s+at /)
  })
})
