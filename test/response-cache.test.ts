import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain, uniqueName } from './helpers/fixtures/domains.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { openDatabase } from '../src/db/database.js'
import { ManualClock } from '../src/clock.js'

const names = (r: { body: { data: { domains: { domain: string }[] } } }) => r.body.data.domains.map((d) => d.domain)

forEachDialect((dialect) => {
  describe(`cacheable reads always show the current data (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    let zone: string
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Cache A')
      b = await t.account('Cache B')
      zone = await makeDomain(t, a, uniqueName('cache'))
    })
    after(() => t.close())

    it('a write through the API shows in the next read of the same URL', async () => {
      const before = await t.request('GET', `/domains/${zone}/dns`, { key: a.key })
      const again = await t.request('GET', `/domains/${zone}/dns`, { key: a.key })
      assert.equal(again.text, before.text)
      const patched = await t.request('PATCH', `/domains/${zone}/dns`, {
        key: a.key,
        body: { record: { type: 'TXT', name: '_acme-challenge', value: 'first', ttl: 120 } },
      })
      assert.equal(patched.status, 200)
      const first = await t.request('GET', `/domains/${zone}/dns`, { key: a.key })
      assert.ok(first.body.data.records.some((r: { value: string }) => r.value === 'first'))
      await t.request('PATCH', `/domains/${zone}/dns`, {
        key: a.key,
        body: { record: { type: 'TXT', name: '_acme-challenge', value: 'second', ttl: 120 } },
      })
      const second = await t.request('GET', `/domains/${zone}/dns`, { key: a.key })
      const values = second.body.data.records.map((r: { value: string }) => r.value)
      assert.ok(values.includes('second') && !values.includes('first'))
    })

    it('a write by another connection to the database (another process, the admin CLI) shows in the next read', async () => {
      await t.request('GET', '/domains', { key: a.key })
      const other = openDatabase(t.config.database)
      try {
        await other.db
          .updateTable('domains')
          .set({ tags: JSON.stringify(['changed-elsewhere']) })
          .where('name', '=', zone)
          .execute()
      } finally {
        await other.close()
      }
      const r = await t.request('GET', '/domains', { key: a.key })
      assert.deepEqual(r.body.data.domains.find((d: { domain: string }) => d.domain === zone).tags, [
        'changed-elsewhere',
      ])
    })

    it('answers are kept per account: the same URL gives each account its own data', async () => {
      const own = await makeDomain(t, b, uniqueName('cache-b'))
      const ra = await t.request('GET', '/domains', { key: a.key })
      const rb = await t.request('GET', '/domains', { key: b.key })
      assert.deepEqual(names(rb), [own])
      assert.ok(!names(ra).includes(own))
      assert.deepEqual(names(await t.request('GET', '/domains', { key: b.key })), [own])
    })

    it('a cached answer is still refused to a key that lost access, and to a sub-user without the permission', async () => {
      const url = `/domains/${zone}`
      assert.equal((await t.request('GET', url, { key: a.key })).status, 200)
      const sub = await t.subUser(a, { domains: false })
      assert.deepEqual((await t.request('GET', url, { key: sub.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
      const { key } = await t.ctx.services.iam.createKey(a.accountId, a.userId, { label: 'revoked soon' })
      assert.equal((await t.request('GET', url, { key })).status, 200)
      const keys = await t.ctx.services.iam.listKeys(a.accountId)
      const made = keys.find((k) => k.label === 'revoked soon')!
      await t.ctx.services.iam.revokeKey(a.accountId, String(made.id))
      assert.equal((await t.request('GET', url, { key })).status, 401)
      assert.equal(
        (await t.request('GET', `/domains/${zone}`, { key: b.key })).body.status_description,
        'You have no access to this resource',
      )
    })

    it('query strings are part of what is kept: another page is another answer', async () => {
      await makeDomain(t, a, uniqueName('cache-2'))
      const p1 = await t.request('GET', '/domains?page=1&limit=1', { key: a.key })
      const p2 = await t.request('GET', '/domains?page=2&limit=1', { key: a.key })
      assert.notDeepEqual(names(p1), names(p2))
      assert.deepEqual(names(await t.request('GET', '/domains?page=1&limit=1', { key: a.key })), names(p1))
    })
  })
})

forEachDialect((dialect) => {
  describe(`the backups list, answered by the hypervisor driver, is cached only while exact (${dialect})`, () => {
    const clock = new ManualClock()
    let t: TestApp
    let a: TestAccount
    before(async () => {
      // Half a minute before the nightly hour (03:00 UTC) of the next day.
      const now = clock.now()
      clock.advance(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 2, 59, 30) - now.getTime())
      t = await startTestApp(dialect, { clock, env: { HOSTAPI_AUTH_CACHE_MS: '60000' } })
      a = await t.account('Backups')
    })
    after(() => t.close())

    it('serves the list again, shows a new backup, and shows the nightly once its hour has passed', async () => {
      const id = await makeVps(t, a, { settle: true })
      const list = async () => {
        const before = t.ctx.roundTrips()
        const r = await t.request('GET', `/vps/${id}/backups`, { key: a.key })
        assert.equal(r.status, 200)
        return { backups: r.body.details.backups as { type: string }[], roundTrips: t.ctx.roundTrips() - before }
      }
      const first = await list()
      assert.deepEqual(first.backups, [])
      const again = await list()
      assert.deepEqual(again.backups, [])
      // Where there is a response cache (SQLite), the second answer reads neither the database nor the driver.
      if (dialect === 'sqlite') assert.equal(again.roundTrips, 0)

      assert.equal((await t.request('POST', `/vps/${id}/backups`, { key: a.key })).status, 200)
      await t.ctx.jobs.drain()
      assert.deepEqual(
        (await list()).backups.map((b) => b.type),
        ['manual'],
      )
      // Within the key lookup's cache lifetime, so no other read or write than the clock's tells the answers apart.
      clock.advance(40_000)
      assert.deepEqual(
        (await list()).backups.map((b) => b.type),
        ['incremental', 'manual'],
      )
    })
  })
})

describe('with HOSTAPI_RESPONSE_CACHE_MB=0 reads still answer the current data', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp('sqlite', { env: { HOSTAPI_RESPONSE_CACHE_MB: '0' } })
  })
  after(() => t.close())

  it('lists, writes and lists again', async () => {
    const a = await t.account('No cache')
    const first = await makeDomain(t, a, uniqueName('nocache'))
    assert.deepEqual(names(await t.request('GET', '/domains', { key: a.key })), [first])
    const second = await makeDomain(t, a, uniqueName('nocache'))
    assert.deepEqual(names(await t.request('GET', '/domains', { key: a.key })), [first, second])
  })
})
