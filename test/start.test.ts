import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import Database from 'better-sqlite3'
import { request, tempDir } from './helpers/app.js'
import { spawnServer } from './helpers/process.js'

describe('hostapi serve (the demo start)', () => {
  it('seeds a demo account on an empty database, prints the demo key, and serves it over HTTPS', async () => {
    const dataDir = tempDir()
    const server = spawnServer({ HOSTAPI_DATA_DIR: dataDir, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0' })
    try {
      const [, url] = await server.waitFor(/^hostapi listening on (https:\/\/\S+)/)
      const [, key] = await server.waitFor(/^Demo API key: (\S+)$/)
      const origin = url.replace(/\/api\/v2$/, '')
      const who = await request(origin, 'GET', '/api/v2/whoami', { key })
      assert.equal(who.status, 200)
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
      } finally {
        again.child.kill('SIGTERM')
        await again.exited
      }
    } finally {
      server.child.kill('SIGKILL')
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('uses HOSTAPI_DEMO_KEY as the demo key, and HOSTAPI_DEMO=0 seeds nothing', async () => {
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
    const emptyDir = tempDir()
    const bare = spawnServer({
      HOSTAPI_DATA_DIR: emptyDir,
      HOSTAPI_PORT: '0',
      HOSTAPI_DNS_PORT: '0',
      HOSTAPI_DEMO: '0',
    })
    try {
      // The demo data is seeded before the server listens, and its key printed right after the admin API line.
      await bare.waitFor(/^Admin API: /)
      const db = new Database(`${emptyDir}/hostapi.db`, { readonly: true })
      try {
        assert.deepEqual(db.prepare('select count(*) as n from accounts').get(), { n: 0 })
      } finally {
        db.close()
      }
      assert.ok(!fs.existsSync(`${emptyDir}/demo-api-key`))
      // Once the process has ended, `lines` holds everything it printed.
      bare.child.kill('SIGTERM')
      await bare.exited
      assert.ok(!bare.lines.some((l) => l.startsWith('Demo API key')))
    } finally {
      bare.child.kill('SIGTERM')
      await bare.exited
      fs.rmSync(emptyDir, { recursive: true, force: true })
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
