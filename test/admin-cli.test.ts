import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, processDatabase, startTestApp, type ProcessDatabase, type TestApp } from './helpers/app.js'
import { runAdminCli } from './helpers/process.js'
import { iso } from '../src/clock.js'
import * as orders from '../src/modules/orders/orders.repository.js'

forEachDialect((dialect) => {
  describe(`admin CLI: tokens and suspension (${dialect})`, () => {
    let p: ProcessDatabase
    let t: TestApp
    before(async () => {
      p = await processDatabase(dialect)
      // The app caches key lookups for a second by default; this test changes keys from another process.
      t = await startTestApp(dialect, { database: p.database, env: { HOSTAPI_AUTH_CACHE_MS: '0' } })
    })
    after(async () => {
      await t.close()
      await p.remove()
    })
    const admin = (...args: string[]) => runAdminCli(p.env, ...args)
    const adm = (token: string, p: string) =>
      t.request('GET', `/admin/v1${p}`, { headers: { authorization: `Bearer ${token}` } })

    it('creates an admin token (printed alone, once), lists and revokes it', async () => {
      const created = await admin('token', 'create', '--label', 'ops')
      assert.match(created.out, /^adm_[A-Za-z0-9]{40}\n$/, 'the token alone on stdout')
      const token = created.out.trim()
      assert.equal((await adm(token, '/accounts')).status, 200)
      assert.deepEqual((await t.request('GET', '/whoami', { key: token })).body, {
        status: 401,
        status_description: 'No valid API key set',
      })

      const list = (await admin('token', 'list')).out
      const row = list.split('\n').find((l) => l.startsWith(token.slice(0, 12)))!
      assert.ok(row.includes('\tops\t') && !list.includes(token), row)

      await admin('token', 'revoke', token.slice(0, 12))
      assert.deepEqual((await adm(token, '/accounts')).body, {
        status: 401,
        status_description: 'No valid admin token set',
      })
      await assert.rejects(admin('token', 'revoke', 'adm_nothing'), (e: { stderr: string; code: number }) => {
        assert.equal(e.code, 1)
        assert.match(e.stderr, /Admin token not found/)
        return true
      })
    })

    it('suspends and unsuspends an account', async () => {
      // The account and its key are made in this process (test/cli.test.ts makes them through the CLI).
      const a = await t.account('Suspend B.V.')
      const [customer, key] = [String(a.customerNumber), a.key]
      assert.equal((await t.request('GET', '/whoami', { key })).status, 200)
      await admin('account', 'suspend', '--account', customer)
      assert.deepEqual((await t.request('GET', '/whoami', { key })).body, {
        status: 401,
        status_description: 'No valid API key set',
      })
      await admin('account', 'unsuspend', '--account', customer)
      assert.equal((await t.request('GET', '/whoami', { key })).status, 200)
    })

    it('lists, shows, retries and cancels orders', async () => {
      const a = await t.account('Orders B.V.')
      const now = iso(t.ctx.clock.now())
      const { id } = await orders.insertOrder(t.ctx.db, {
        account_id: a.accountId,
        status: 'open',
        total_cents: 0,
        created_at: now,
      })
      await orders.insertItem(t.ctx.db, {
        ...{ order_id: id, account_id: a.accountId, type: 'domain', name: `cli-${id}.com`, price_cents: 0 },
        ...{ details: '{}', status: 'pending', errors: '[]', result: null, created_at: now, updated_at: now },
      })
      const list = (await admin('order', 'list', '--status', 'open', '--account', String(a.customerNumber))).out
      assert.deepEqual(
        list
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split('\t').slice(0, 3)),
        [[String(id), String(a.accountId), 'open']],
      )
      const shown = JSON.parse((await admin('order', 'show', String(id))).out)
      assert.deepEqual([shown.id, shown.items[0].status, shown.jobs], [id, 'pending', []])
      assert.equal((await admin('order', 'retry', String(id))).out, 'open\n')
      assert.deepEqual(
        JSON.parse((await admin('order', 'show', String(id))).out).jobs.map((j: { status: string }) => j.status),
        ['queued'],
      )
      assert.equal((await admin('order', 'cancel', String(id))).out, 'cancelled\n')
      await assert.rejects(admin('order', 'retry', String(id)), (e: { stderr: string; code: number }) => {
        assert.equal(e.code, 1)
        assert.match(e.stderr, /This order is cancelled/)
        return true
      })
    })
  })
})
