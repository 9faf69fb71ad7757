import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { request, tempDir } from './helpers/app.js'
import { cliArgv, spawnServer, type ServerProcess } from './helpers/process.js'

const canFakeTerminal = process.platform === 'linux' && fs.existsSync('/usr/bin/script')

/** Starts a server with `env`, calls whoami (with a query) and an unknown path, stops it; returns what it printed. */
async function twoRequests(env: Record<string, string>, terminal = false): Promise<ServerProcess> {
  const dataDir = tempDir()
  const all = { HOSTAPI_DATA_DIR: dataDir, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0', HOSTAPI_LOG_LEVEL: 'info', ...env }
  const cmd = [process.execPath, ...cliArgv, 'serve'].join(' ')
  const server = spawnServer(all, terminal ? { argv: ['script', '-qfec', cmd, '/dev/null'] } : {})
  try {
    const [, url] = await server.waitFor(/^hostapi listening on (https:\/\/\S+)/)
    const origin = url!.replace(/\/api\/v2$/, '')
    const key = env.HOSTAPI_DEMO_KEY ?? 'no-key'
    await request(origin, 'GET', '/api/v2/whoami?secret=1', { key })
    assert.equal((await request(origin, 'GET', '/api/v2/no/such/path', { key })).status, 404)
  } finally {
    await server.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  return server
}

const demoKey = 'requestLogDemoKey_0123456789'

describe('a log line per request', () => {
  it('demo mode logs every request as JSON when piped: method, path without the query, status, ms, operation', async () => {
    const server = await twoRequests({ HOSTAPI_DEMO_KEY: demoKey })
    const lines = server.lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { request?: unknown; msg: string })
    const requests = lines.filter((l) => l.request).map((l) => l.request as Record<string, unknown>)
    assert.equal(requests.length, 2, server.lines.join('\n'))
    const [whoami, unknown] = requests as [Record<string, unknown>, Record<string, unknown>]
    assert.deepEqual(
      { ...whoami, ms: typeof whoami.ms, id: typeof whoami.id },
      {
        id: 'string',
        method: 'GET',
        path: '/api/v2/whoami',
        status: 200,
        ms: 'number',
        operation: 'whoami',
      },
    )
    assert.equal(unknown.status, 404)
    assert.equal(unknown.operation, null)
    assert.ok(!server.lines.some((l) => l.includes('secret=1')), 'the query is not logged')
  })

  it('on a terminal the line reads as one: time, level, method, path, status, ms and operation', {
    skip: !canFakeTerminal,
  }, async () => {
    const server = await twoRequests({ HOSTAPI_DEMO_KEY: demoKey }, true)
    const line = server.lines.find((l) => l.includes('/api/v2/whoami'))
    assert.match(line ?? '', /^\d\d:\d\d:\d\d INFO {2}GET \/api\/v2\/whoami 200 [\d.]+ms whoami\r?$/)
  })

  it('is on in production as in demo mode, and HOSTAPI_REQUEST_LOG=0 turns it off', async () => {
    const count = (s: ServerProcess) => s.lines.filter((l) => l.includes('"request":')).length
    assert.equal(count(await twoRequests({ HOSTAPI_DEMO: '0' })), 2)
    assert.equal(count(await twoRequests({ HOSTAPI_DEMO: '0', HOSTAPI_REQUEST_LOG: '0' })), 0)
    assert.equal(count(await twoRequests({ HOSTAPI_DEMO_KEY: demoKey, HOSTAPI_REQUEST_LOG: '0' })), 0)
  })
})
