import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { loadConfig } from '../src/config/config.js'
import { editDistance, KNOWN_SETTINGS, unknownSettings } from '../src/config/known-settings.js'
import { tempDir } from './helpers/app.js'
import { cliArgv, spawnServer } from './helpers/process.js'

const base = { PATH: process.env.PATH ?? '', HOSTAPI_LOG_LEVEL: 'warn' }

/** Runs `hostapi <args>` in `cwd` with only `env`: exit code and output. */
function hostapi(cwd: string, env: Record<string, string>, ...args: string[]) {
  return new Promise<{ code: number; out: string; err: string }>((resolve) => {
    execFile(process.execPath, [...cliArgv, ...args], { cwd, env: { ...base, ...env } }, (err, out, e) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, out, err: e }),
    )
  })
}

/** A TCP port on 127.0.0.1 nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as net.AddressInfo
  await new Promise((resolve) => s.close(resolve))
  return port
}

/** The one line a failed start printed, checked to be one line without a stack trace. */
function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n')
  assert.equal(lines.length, 1, stderr)
  assert.doesNotMatch(stderr, /\n\s+at /)
  return lines[0]!
}

describe('configuration that explains itself', () => {
  it('an unreachable PostgreSQL stops the start with one line naming DATABASE_URL, the password hidden', async () => {
    const dataDir = tempDir()
    try {
      const url = `postgres://hostapi:s3cret@127.0.0.1:${await closedPort()}/hostapi`
      const server = spawnServer({
        HOSTAPI_DATA_DIR: dataDir,
        HOSTAPI_PORT: '0',
        HOSTAPI_DNS_PORT: '0',
        DATABASE_URL: url,
      })
      assert.equal((await server.exited).code, 2)
      const line = server.startError()
      assert.match(
        line,
        /^Cannot reach the PostgreSQL database at postgres:\/\/hostapi:\*\*\*@127\.0\.0\.1:\d+\/hostapi \(DATABASE_URL\): .*ECONNREFUSED/,
      )
      assert.doesNotMatch(line, /s3cret/)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('a PostgreSQL database that does not exist is named in one line', {
    skip: !process.env.HOSTAPI_TEST_PG_URL,
  }, async () => {
    const dataDir = tempDir()
    try {
      const url = new URL(process.env.HOSTAPI_TEST_PG_URL!)
      url.pathname = '/hostapi_no_such_database'
      const r = await hostapi(dataDir, { HOSTAPI_DATA_DIR: dataDir, DATABASE_URL: url.toString() }, 'migrate')
      assert.equal(r.code, 2)
      // The command's log shares stderr (JSON lines when it is not a terminal): the failure is the one other line.
      assert.match(
        oneLine(r.err.replace(/^\{.*\n/gm, '')),
        /^Cannot use the PostgreSQL database at .*\/hostapi_no_such_database \(DATABASE_URL\): the database does not exist/,
      )
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('warns of a HOSTAPI_* variable it does not read, naming the nearest one it does', async () => {
    assert.deepEqual(
      unknownSettings({ HOSTAPI_PROT: '1', HOSTAPI_PORT: '1', PATH: '/bin', HOSTAPI_TEST_PG_URL: 'x' }),
      ['HOSTAPI_PROT is not a hostapi setting and is ignored: did you mean HOSTAPI_PORT?'],
    )
    assert.deepEqual(unknownSettings({ HOSTAPI_DATADIR: 'x' }), [
      'HOSTAPI_DATADIR is not a hostapi setting and is ignored: did you mean HOSTAPI_DATA_DIR?',
    ])
    assert.deepEqual(unknownSettings({ HOSTAPI_COMPLETELY_DIFFERENT_THING: '1' }), [
      'HOSTAPI_COMPLETELY_DIFFERENT_THING is not a hostapi setting and is ignored (docs/configuration.md lists the settings)',
    ])
    assert.equal(editDistance('HOSTAPI_PROT', 'HOSTAPI_PORT'), 1)
    assert.deepEqual(loadConfig({ HOSTAPI_SANDBOXX: '1' }).warnings, [
      'HOSTAPI_SANDBOXX is not a hostapi setting and is ignored: did you mean HOSTAPI_SANDBOX?',
    ])
  })

  it('knows every variable the configuration reads, and docs/configuration.md lists every one', () => {
    const dir = new URL('../src/config/', import.meta.url).pathname
    const read = new Set<string>()
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.includes('known-settings')))
      for (const m of fs
        .readFileSync(path.join(dir, file), 'utf8')
        .matchAll(/\b(?:HOSTAPI_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL|REDIS_URL)\b/g))
        read.add(m[0])
    assert.deepEqual([...KNOWN_SETTINGS].sort(), [...read].sort())
    const listed = fs.readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8')
    const undocumented = KNOWN_SETTINGS.filter((n) => !listed.includes(`\`${n}\``))
    assert.deepEqual(undocumented, [])
  })

  it('the DNS server does not default to the mDNS port', () => {
    assert.equal(loadConfig({}).dns.port, 8053)
  })

  it('serve takes --port, --host, --data-dir and --env-file; the environment wins over the file, flags over both', async () => {
    const dataDir = tempDir()
    const cwd = tempDir()
    try {
      const envFile = path.join(cwd, 'hostapi.env')
      const demoKey = 'fromTheEnvFile_0123456789'
      // The file's port and DNS port would fail: the flag and the environment win over them.
      fs.writeFileSync(envFile, `# settings\nHOSTAPI_DEMO_KEY=${demoKey}\nHOSTAPI_PORT=1\nHOSTAPI_DNS_PORT=1\n`)
      const argv = [process.execPath, ...cliArgv, 'serve', '--port', '0', '--host=127.0.0.1']
      const server = spawnServer(
        { HOSTAPI_PORT: 'eighty', HOSTAPI_HOST: '192.0.2.1', HOSTAPI_DNS_PORT: '0' },
        { argv: [...argv, '--data-dir', dataDir, '--env-file', envFile] },
      )
      try {
        await server.waitFor(/^hostapi listening on https:\/\/127\.0\.0\.1:\d+\/api\/v2$/)
        const [, key] = await server.waitFor(/^Demo API key: (\S+)$/)
        assert.equal(key, demoKey)
        assert.ok(fs.existsSync(path.join(dataDir, 'hostapi.db')))
      } finally {
        server.child.kill('SIGTERM')
        await server.exited
      }
      assert.deepEqual(fs.readdirSync(cwd), ['hostapi.env'], 'nothing written where it ran')
      // Node 20 itself reads an `--env-file` that follows the script (and refuses a missing one with its own line).
      const missing = await hostapi(cwd, {}, 'serve', '--env-file', path.join(cwd, 'nope.env'))
      assert.notEqual(missing.code, 0)
      assert.match(oneLine(missing.err.replace(/^Invalid configuration:\n\s*- /, '')), /nope\.env/)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
      fs.rmSync(cwd, { recursive: true, force: true })
    }
  })

  it('admin help writes no file; an admin command refuses a folder without a database; migrate creates one', async () => {
    const cwd = tempDir()
    try {
      const help = await hostapi(cwd, {}, 'admin', 'help')
      assert.equal(help.code, 0)
      assert.match(help.out, /^Usage: hostapi admin/)
      assert.deepEqual(fs.readdirSync(cwd), [])
      const refused = await hostapi(cwd, {}, 'admin', 'token', 'list')
      assert.equal(refused.code, 2)
      assert.match(
        oneLine(refused.err),
        /^No hostapi database at .*data\/hostapi\.db: run the command where the server runs/,
      )
      assert.deepEqual(fs.readdirSync(cwd), [], 'no database, no data folder, no key file')
      assert.equal((await hostapi(cwd, {}, 'migrate')).code, 0)
      const listed = await hostapi(cwd, {}, 'admin', 'token', 'list')
      assert.equal(listed.code, 0, listed.err)
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true })
    }
  })

  it('a DNS port in use stops the start with one line, before anything says it listens', async () => {
    const dataDir = tempDir()
    const busy = net.createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const port = String((busy.address() as net.AddressInfo).port)
    try {
      const server = spawnServer({
        HOSTAPI_DATA_DIR: dataDir,
        HOSTAPI_PORT: '0',
        HOSTAPI_DEMO: '0',
        HOSTAPI_DNS_PORT: port,
        // Fastify says `Server listening` at info.
        HOSTAPI_LOG_LEVEL: 'info',
      })
      assert.equal((await server.exited).code, 2)
      assert.match(server.startError(), new RegExp(`127\\.0\\.0\\.1:${port} .*HOSTAPI_DNS_PORT`))
      assert.ok(!server.lines.some((l) => /listening/i.test(l)), server.lines.join('\n'))
    } finally {
      busy.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
