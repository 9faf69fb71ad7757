import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { forEachDialect, processDatabase, startTestApp, tempDir, type ProcessDatabase } from './helpers/app.js'
import { runAdminCli, runCli } from './helpers/process.js'

forEachDialect((dialect) => {
  describe(`admin CLI (${dialect})`, () => {
    let p: ProcessDatabase
    before(async () => {
      p = await processDatabase(dialect)
      // The admin commands work on a server's database: they never create one.
      assert.equal((await runCli(p.env, 'migrate')).code, 0)
    })
    after(async () => {
      await p.remove()
    })
    const admin = (...args: string[]) => runAdminCli(p.env, ...args)

    it('creates an account, a sub-user and keys that the API accepts, then lists, restricts and revokes them', async () => {
      const customer = (await admin('account', 'create', '--name', 'Acme', '--email', 'ops@acme.test')).out.trim()
      assert.match(customer, /^\d+$/)
      const key = (
        await admin(
          'key',
          'create',
          '--account',
          customer,
          '--label',
          'ci',
          '--allow-ip',
          '127.0.0.1',
          '--allow-ip',
          '2001:db8::/32',
        )
      ).out
      assert.match(key, /^[A-Za-z0-9]{40}\n$/, 'the key alone on stdout')
      const userId = (
        await admin('user', 'create', '--account', customer, '--email', 'dns@acme.test', '--permission', 'domains')
      ).out.trim()
      const subKey = (await admin('key', 'create', '--user', userId, '--expires', '2000-01-01')).out.trim()

      // The CLI is another process: with no lookup cache its changes are seen on the next request.
      const t = await startTestApp(dialect, { database: p.database, env: { HOSTAPI_AUTH_CACHE_MS: '0' } })
      try {
        const who = await t.request('GET', '/whoami', { key: key.trim() })
        assert.equal(who.status, 200)
        assert.equal(who.body.data.customer_number, Number(customer))
        assert.equal(
          (await t.request('GET', '/whoami', { key: subKey })).body.status_description,
          'API key has expired',
        )

        const list = (await admin('key', 'list', '--account', customer)).out
        const row = list.split('\n').find((l) => l.startsWith(key.slice(0, 8)))!
        assert.ok(row.includes('ci') && row.includes('127.0.0.1,2001:db8::/32') && row.includes('from 127.0.0.1'), row)

        await admin('key', 'whitelist', '--account', customer, key.slice(0, 8), '--allow-ip', '192.0.2.1')
        assert.equal(
          (await t.request('GET', '/whoami', { key: key.trim() })).body.status_description,
          'Remote IP address is not found in the API key whitelist (127.0.0.1)',
        )
        await admin('key', 'whitelist', '--account', customer, key.slice(0, 8))
        assert.equal((await t.request('GET', '/whoami', { key: key.trim() })).status, 200)

        await admin('key', 'revoke', '--account', customer, key.slice(0, 8))
        assert.equal(
          (await t.request('GET', '/whoami', { key: key.trim() })).body.status_description,
          'No valid API key set',
        )
      } finally {
        await t.close()
      }
    })

    it('refuses an unknown permission name with the list of valid ones', async () => {
      // The names are checked before the account is looked up: no account is needed to see the refusal.
      const create = admin('user', 'create', '--account', '1', '--email', 'x@acme.test', '--permission', 'bogus')
      await assert.rejects(create, (e: { stderr: string; code: number }) => {
        assert.equal(e.code, 2)
        assert.match(e.stderr, /^Unknown permission: bogus\. Valid names: domains, domains-profiles, .*, order\n$/)
        return true
      })
    })

    it('explains a usage error without a stack trace', async () => {
      await assert.rejects(admin('key', 'create', '--account', '999999999'), (e: { stderr: string; code: number }) => {
        assert.equal(e.code, 2)
        assert.match(e.stderr, /No account with customer number 999999999/)
        assert.doesNotMatch(e.stderr, /\n\s+at /)
        return true
      })
    })
  })
})

describe('admin commands: the result alone on stdout', () => {
  it('what a command logs (an open data directory) goes to stderr; stdout holds the key alone', async () => {
    const dataDir = tempDir()
    try {
      const env = { PATH: process.env.PATH ?? '', HOSTAPI_DATA_DIR: dataDir, HOSTAPI_LOG_LEVEL: 'info' }
      assert.equal((await runCli(env, 'migrate')).code, 0)
      fs.chmodSync(dataDir, 0o755)
      const customer = await runAdminCli(env, 'account', 'create', '--name', 'Out', '--email', 'ops@out.test')
      assert.match(customer.out, /^\d+\n$/)
      const key = await runAdminCli(env, 'key', 'create', '--account', customer.out.trim())
      assert.match(key.out, /^[A-Za-z0-9]{40}\n$/, key.out)
      assert.match(key.err, /the data directory is open to group or others/)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
