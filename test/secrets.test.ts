import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import pino from 'pino'
import { ConfigError, loadConfig } from '../src/config/config.js'
import { loadSecretKeys } from '../src/secret-key.js'
import { keyId, parseSecretKey, SecretBox } from '../src/lib/secret-box.js'
import { forEachDialect, processDatabase, rawRows, startTestApp, tempDir, type TestApp } from './helpers/app.js'
import { runAdminCli, spawnServer } from './helpers/process.js'
import { opensslCsr, opensslVerify } from './helpers/pki.js'

const mode = (file: string) => (fs.statSync(file).mode & 0o777).toString(8)
const newKey = () => randomBytes(32).toString('base64')

/** The CA of `t` signs a CSR made by openssl, verifying against its root: its private key opens. */
async function issues(t: TestApp): Promise<string> {
  const csr = opensslCsr('secrets.example.com')
  const issued = await t.ctx.drivers.ca.issue({
    csr,
    names: ['secrets.example.com'],
    notAfter: new Date(Date.now() + 30 * 86_400_000),
  })
  const root = await t.ctx.drivers.ca.rootCertificate()
  assert.ok(root, 'the built-in CA holds its root')
  assert.match(opensslVerify(root, issued.intermediate, issued.certificate), /OK$/)
  return root
}

const caKeys = async (t: { config: TestApp['config'] }) =>
  (await rawRows(t.config.database, 'select root_key, intermediate_key from ca_authorities')).map((r) => [
    String(r.root_key),
    String(r.intermediate_key),
  ])

describe('hostapi serve: the data directory and the files holding secrets are owner-only', () => {
  it('creates the data directory 0700 and the database, -wal, -shm, TLS key, demo key and secret key 0600, and tightens older files', async () => {
    const root = tempDir()
    const dataDir = path.join(root, 'data')
    const env = { HOSTAPI_DATA_DIR: dataDir, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0' }
    const secretFiles = [
      'hostapi.db',
      'hostapi.db-wal',
      'hostapi.db-shm',
      'tls-key.pem',
      'demo-api-key',
      'secret.key',
    ].map((f) => path.join(dataDir, f))
    try {
      const first = spawnServer(env)
      try {
        await first.waitFor(/^Demo API key: /)
        assert.equal(mode(dataDir), '700')
        for (const f of secretFiles) assert.equal(mode(f), '600', f)
        assert.equal(parseSecretKey(fs.readFileSync(path.join(dataDir, 'secret.key'), 'utf8'))?.length, 32)
      } finally {
        first.child.kill('SIGTERM')
        await first.exited
      }

      // As an earlier version left them: everything readable by others.
      fs.chmodSync(dataDir, 0o755)
      for (const f of secretFiles) if (fs.existsSync(f)) fs.chmodSync(f, 0o644)
      const again = spawnServer(env)
      try {
        await again.waitFor(/^hostapi listening on/)
        for (const f of secretFiles) if (fs.existsSync(f)) assert.equal(mode(f), '600', f)
        assert.equal(mode(dataDir), '755', "the operator's directory mode is left, with a warning")
        assert.ok(
          again.lines.some((l) => l.includes('the data directory is open to group or others')),
          again.lines.join('\n'),
        )
      } finally {
        again.child.kill('SIGTERM')
        await again.exited
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('HOSTAPI_SECRET_KEY_NEXT', () => {
  it('opens values sealed with the next key while sealing with the current one; a malformed one stops the start', async () => {
    const [current, next] = [newKey(), newKey()]
    const log = pino({ level: 'silent' })
    const dataDir = tempDir()
    try {
      const keys = loadSecretKeys(
        loadConfig({ HOSTAPI_DATA_DIR: dataDir, HOSTAPI_SECRET_KEY: current, HOSTAPI_SECRET_KEY_NEXT: next }),
        log,
      )
      const switched = new SecretBox(parseSecretKey(next)!, [parseSecretKey(current)!])
      assert.equal(keys.box.open(switched.seal('x', 'ctx'), 'ctx'), 'x')
      assert.equal(keys.box.currentKeyId, keyId(parseSecretKey(current)!), 'it never seals with the next key')
      assert.throws(
        () => loadConfig({ HOSTAPI_SECRET_KEY_NEXT: 'not-a-key' }),
        /HOSTAPI_SECRET_KEY_NEXT must be 32 bytes/,
      )
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

forEachDialect((dialect) => {
  describe(`secrets at rest (${dialect})`, () => {
    it('stops a start with another secret key with a clear message and no stack trace', async () => {
      const p = await processDatabase(dialect)
      try {
        const first = spawnServer({
          ...p.env,
          HOSTAPI_PORT: '0',
          HOSTAPI_DNS_PORT: '0',
          HOSTAPI_DEMO: '0',
          HOSTAPI_LOG_LEVEL: 'warn',
        })
        await first.waitFor(/^hostapi listening on/)
        first.child.kill('SIGTERM')
        await first.exited
        const wrong = spawnServer({
          ...p.env,
          HOSTAPI_PORT: '0',
          HOSTAPI_DNS_PORT: '0',
          HOSTAPI_DEMO: '0',
          HOSTAPI_SECRET_KEY: newKey(),
        })
        const { code } = await wrong.exited
        assert.equal(code, 2)
        assert.match(
          wrong.startError(),
          /The secret key \(HOSTAPI_SECRET_KEY, key id [0-9a-f]{16}\) does not open the secrets stored in the database/,
        )
        assert.match(wrong.stderr(), /every instance on one database needs the same key/)
        assert.doesNotMatch(wrong.stderr(), /\n\s+at /)
      } finally {
        await p.remove()
      }
    })

    it('checks the CA keys at start too: a CA sealed with another key stops the start', async () => {
      const a = newKey()
      const t = await startTestApp(dialect, { env: { HOSTAPI_SECRET_KEY: a } })
      const database = t.config.database
      try {
        await t.ctx.drivers.ca.rootCertificate()
        // Without the key check row only the CA's own keys can tell.
        await t.ctx.db.deleteFrom('secret_key_checks').execute()
        await t.server.close()
        await assert.rejects(
          startTestApp(dialect, { database, env: { HOSTAPI_SECRET_KEY: newKey() } }),
          (err: Error) => {
            assert.ok(err instanceof ConfigError)
            assert.match(
              err.message,
              /ca_authorities\.builtin\.root_key was sealed with the secret key [0-9a-f]{16}, which is not configured/,
            )
            return true
          },
        )
      } finally {
        await t.close().catch(() => undefined)
      }
    })

    it('seals CA keys stored in plaintext by an earlier version at the next start, and keeps signing with them', async () => {
      const key = newKey()
      const box = new SecretBox(parseSecretKey(key)!)
      const t = await startTestApp(dialect, { env: { HOSTAPI_SECRET_KEY: key } })
      const database = t.config.database
      let again: TestApp | null = null
      try {
        const root = await issues(t)
        const row = await t.ctx.db.selectFrom('ca_authorities').selectAll().executeTakeFirstOrThrow()
        await t.ctx.db
          .updateTable('ca_authorities')
          .set({
            root_key: box.open(row.root_key, 'ca_authorities.builtin.root_key'),
            intermediate_key: box.open(row.intermediate_key, 'ca_authorities.builtin.intermediate_key'),
          })
          .execute()
        assert.match((await caKeys(t))[0][1], /^-----BEGIN PRIVATE KEY-----/)
        await t.server.close()

        again = await startTestApp(dialect, { database, env: { HOSTAPI_SECRET_KEY: key } })
        for (const value of (await caKeys(again))[0]) assert.match(value, new RegExp(`^v1:${box.currentKeyId}:`))
        assert.equal(await issues(again), root)
      } finally {
        await again?.close()
        await t.close().catch(() => undefined)
      }
    })

    it('rotates the secret key: hostapi admin secrets rotate re-seals with the new key, which then works alone', async () => {
      const p = await processDatabase(dialect)
      const [oldKey, nextKey] = [newKey(), newKey()]
      try {
        const t = await startTestApp(dialect, { database: p.database, env: { HOSTAPI_SECRET_KEY: oldKey } })
        const root = await issues(t)
        await t.close()
        const before = await caKeys(t)

        // Without the old key the stored secrets do not open: nothing is changed.
        await assert.rejects(
          runAdminCli({ ...p.env, HOSTAPI_SECRET_KEY: nextKey }, 'secrets', 'rotate'),
          (e: { code: number; stderr: string }) => {
            assert.equal(e.code, 1)
            assert.match(e.stderr, /sealed with the secret key [0-9a-f]{16}, which is not configured/)
            return true
          },
        )
        assert.deepEqual(await caKeys(t), before)

        const rotated = await runAdminCli(
          { ...p.env, HOSTAPI_SECRET_KEY: nextKey, HOSTAPI_SECRET_KEY_PREVIOUS: oldKey },
          'secrets',
          'rotate',
        )
        assert.match(
          rotated.err,
          new RegExp(`re-sealed 2 stored value\\(s\\) with the secret key ${keyId(parseSecretKey(nextKey)!)}`),
        )
        for (const value of (await caKeys(t))[0])
          assert.match(value, new RegExp(`^v1:${keyId(parseSecretKey(nextKey)!)}:`))
        // A second run finds nothing left to re-seal.
        assert.match(
          (await runAdminCli({ ...p.env, HOSTAPI_SECRET_KEY: nextKey }, 'secrets', 'rotate')).err,
          /re-sealed 0 /,
        )

        const next = await startTestApp(dialect, { database: p.database, env: { HOSTAPI_SECRET_KEY: nextKey } })
        try {
          assert.equal(await issues(next), root)
        } finally {
          await next.close()
        }
        await assert.rejects(
          startTestApp(dialect, { database: p.database, env: { HOSTAPI_SECRET_KEY: oldKey } }),
          ConfigError,
        )
      } finally {
        await p.remove()
      }
    })
  })
})
