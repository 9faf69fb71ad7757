import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { PERMISSIONS } from '../src/modules/iam/permissions.js'
import { verifyPassword } from '../src/modules/account/users/passwords.js'

const newUser = (n: number, extra: Record<string, unknown> = {}) => ({
  email: `user${n}-${Math.random().toString(36).slice(2, 8)}@example.com`,
  firstname: 'New',
  lastname: `User ${n}`,
  password: 'correct horse battery staple',
  ...extra,
})

forEachDialect((dialect) => {
  describe(`account users (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account()
    })
    after(() => t.close())

    it('creates a sub-user with a hashed password and the given permissions (others false)', async () => {
      const body = newUser(1, {
        password_confirm: 'correct horse battery staple',
        permissions: { domains: true, 'account-invoices': true },
      })
      const r = await t.request('POST', '/account/users/', { key: a.key, body })
      assert.equal(r.status, 200)
      assert.equal(r.body.status_description, 'User created')
      const u = r.body.data
      assert.equal(u.username, body.email.toLowerCase())
      assert.equal(u.is_main_user, false)
      assert.equal(u.two_factor, false)
      assert.equal(u.permissions.domains, true)
      assert.equal(u.permissions['account-invoices'], true)
      assert.equal(u.permissions.vps, false)
      for (const p of PERMISSIONS) assert.equal(typeof u.permissions[p], 'boolean', p)

      const row = await t.ctx.db.selectFrom('users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow()
      assert.match(row.password_hash!, /^scrypt\$/)
      assert.ok(!row.password_hash!.includes(body.password))
      assert.equal(await verifyPassword(body.password, row.password_hash!), true)
      assert.equal(await verifyPassword('wrong password!!', row.password_hash!), false)

      const got = await t.request('GET', `/account/users/${u.id}`, { key: a.key })
      assert.deepEqual(got.body.data, u)
    })

    it('refuses mismatched confirmation, weak passwords, a bad e-mail and a taken e-mail with clear texts', async () => {
      const mismatch = await t.request('POST', '/account/users', {
        key: a.key,
        body: newUser(2, { password_confirm: 'something else entirely' }),
      })
      assert.deepEqual(mismatch.body, { status: 400, status_description: 'password and password_confirm do not match' })
      const short = await t.request('POST', '/account/users', { key: a.key, body: newUser(3, { password: 'short' }) })
      assert.deepEqual(short.body, {
        status: 400,
        status_description: 'The password is too weak: use at least 10 characters',
      })
      const email = await t.request('POST', '/account/users', { key: a.key, body: newUser(4, { email: 'nope' }) })
      assert.equal(email.status, 400)
      assert.match(email.body.status_description, /email/)
      const missing = await t.request('POST', '/account/users', {
        key: a.key,
        body: { email: 'x@example.com', firstname: 'A', lastname: 'B' },
      })
      assert.deepEqual(missing.body.status_description, 'Missing password')
      const badPerm = await t.request('POST', '/account/users', {
        key: a.key,
        body: newUser(5, { permissions: { domains: 'yes' } }),
      })
      assert.equal(badPerm.status, 400)
      const first = newUser(6)
      assert.equal((await t.request('POST', '/account/users', { key: a.key, body: first })).status, 200)
      const dup = await t.request('POST', '/account/users', {
        key: a.key,
        body: { ...first, email: first.email.toUpperCase() },
      })
      assert.deepEqual(dup.body, { status: 400, status_description: 'A user with this e-mail address already exists' })
    })

    it("keeps e-mail addresses unique per account: another account's address is no answer of its own", async () => {
      const b = await t.account()
      const c = await t.account()
      const theirs = newUser(40)
      const made = await t.request('POST', '/account/users', { key: b.key, body: theirs })
      assert.equal(made.status, 200)
      const bMain = (await t.request('GET', `/account/users/${b.userId}`, { key: b.key })).body.data.email
      // The same addresses in account C: no refusal reveals that account B uses them.
      for (const email of [theirs.email.toUpperCase(), bMain]) {
        const dry = await t.request('POST', '/account/users?test=1', { key: c.key, body: { ...newUser(41), email } })
        assert.equal(dry.status, 200, dry.text)
        const mine = await t.request('POST', '/account/users', { key: c.key, body: { ...newUser(41), email } })
        assert.equal(mine.status, 200, mine.text)
        assert.equal(mine.body.data.email, email)
        // Within one account the address stays unique (in any case).
        const again = await t.request('POST', '/account/users', {
          key: c.key,
          body: { ...newUser(42), email: email.toLowerCase() },
        })
        assert.deepEqual(again.body, {
          status: 400,
          status_description: 'A user with this e-mail address already exists',
        })
      }
      // Account B's users are untouched and its key still works.
      const list = await t.request('GET', '/account/users', { key: b.key })
      assert.deepEqual(
        list.body.data.users.map((u: { email: string }) => u.email),
        [bMain, theirs.email],
      )
    })

    it("answers 404 User not found for a missing user and another account's user", async () => {
      const b = await t.account()
      const other = await t.subUser(b, {})
      for (const id of [999999, other.userId, b.userId]) {
        const r = await t.request('GET', `/account/users/${id}`, { key: a.key })
        assert.deepEqual(r.body, { status: 404, status_description: 'User not found' }, String(id))
        const u = await t.request('PUT', `/account/users/${id}`, { key: a.key, body: { firstname: 'X' } })
        assert.deepEqual(u.body, { status: 404, status_description: 'User not found' }, String(id))
      }
      const bad = await t.request('GET', '/account/users/abc', { key: a.key })
      assert.equal(bad.status, 400)
      const huge = await t.request('GET', '/account/users/99999999999', { key: a.key })
      assert.equal(huge.status, 400)
      assert.match(huge.body.status_description, /^Invalid id/)
    })

    it('lists users paged, the main user first, with search', async () => {
      const c = await t.account()
      for (let i = 0; i < 3; i++)
        await t.request('POST', '/account/users', {
          key: c.key,
          body: newUser(10 + i, { firstname: i === 1 ? 'Zoë' : 'Plain' }),
        })
      const all = await t.request('GET', '/account/users?limit=2', { key: c.key })
      assert.deepEqual(all.body.data.pagination, { page: 1, limit: 2, total: 4, total_pages: 2 })
      assert.equal(all.body.data.users[0].is_main_user, true)
      assert.equal(all.body.data.users[0].id, c.userId)
      for (const p of PERMISSIONS) assert.equal(all.body.data.users[0].permissions[p], true)
      const p2 = await t.request('GET', '/account/users?limit=2&page=2', { key: c.key })
      assert.equal(p2.body.data.users.length, 2)
      assert.deepEqual((await t.request('GET', '/account/users?limit=2&page=3', { key: c.key })).body, {
        status: 400,
        status_description: 'Page out of range',
      })
      const found = await t.request('GET', '/account/users?search=zo', { key: c.key })
      assert.deepEqual(
        found.body.data.users.map((u: { firstname: string }) => u.firstname),
        ['Zoë'],
      )
    })

    it("replaces a sub-user's permissions (left-out names become false), effective at once on its keys", async () => {
      const sub = await t.subUser(a, { domains: true })
      assert.equal((await t.request('GET', '/account/invoices', { key: sub.key })).status, 403)
      const r = await t.request('PUT', `/account/users/${sub.userId}`, {
        key: a.key,
        body: { firstname: 'Renamed', permissions: { 'account-invoices': true } },
      })
      assert.equal(r.status, 200)
      assert.equal(r.body.data.firstname, 'Renamed')
      assert.equal(r.body.data.lastname, 'User')
      assert.equal(r.body.data.permissions['account-invoices'], true)
      assert.equal(r.body.data.permissions.domains, false)
      assert.deepEqual(Object.keys(r.body.data.permissions).sort(), [...PERMISSIONS].sort())
      // The same key, the next request: the new permissions apply.
      assert.equal((await t.request('GET', '/account/invoices', { key: sub.key })).status, 200)
      assert.equal((await t.request('GET', '/orders', { key: sub.key })).status, 403)
      // Names only: permissions stay.
      const names = await t.request('PUT', `/account/users/${sub.userId}`, { key: a.key, body: { lastname: 'Only' } })
      assert.equal(names.body.data.permissions['account-invoices'], true)
      const known = await t.request('PUT', `/account/users/${sub.userId}`, {
        key: a.key,
        body: { permissions: { domains: true } },
      })
      assert.equal(known.body.data.permissions['account-invoices'], false)
      assert.equal(known.body.data.permissions.domains, true)
    })

    it("accepts only the specification's permission names: unknown names, __proto__ and constructor are a 400 and nothing is stored", async () => {
      const sub = await t.subUser(a, { domains: true })
      const before = (await t.request('GET', `/account/users/${sub.userId}`, { key: a.key })).body.data
      // Raw JSON, so `__proto__` is an own key of the body as a client sends it.
      for (const [name, raw] of [
        ['custom-extra', '{"permissions":{"custom-extra":true}}'],
        ['__proto__', '{"permissions":{"__proto__":{"vps":true},"domains":true}}'],
        ['__proto__', '{"permissions":{"__proto__":true}}'],
        ['constructor', '{"permissions":{"constructor":true}}'],
        ['toString', '{"permissions":{"toString":false}}'],
      ] as const) {
        const headers = { 'content-type': 'application/json' }
        const put = await t.request('PUT', `/account/users/${sub.userId}`, { key: a.key, rawBody: raw, headers })
        assert.equal(put.status, 400, raw)
        assert.equal(put.body.status_description, `Invalid permissions.${name}: is not a known name`, raw)
        const create = await t.request('POST', '/account/users', {
          key: a.key,
          rawBody: `${JSON.stringify(newUser(30)).slice(0, -1)},${raw.slice(1)}`,
          headers,
        })
        assert.equal(create.status, 400, raw)
        assert.equal(create.body.status_description, `Invalid permissions.${name}: is not a known name`, raw)
      }
      const after = (await t.request('GET', `/account/users/${sub.userId}`, { key: a.key })).body.data
      assert.deepEqual(after, before)
      assert.equal(Object.getPrototypeOf(after.permissions), Object.prototype)
      assert.equal((await t.request('GET', '/vps', { key: sub.key })).body.status_description, 'No access to this VPS')
    })

    it("never reduces the main user's permissions", async () => {
      const reduce = await t.request('PUT', `/account/users/${a.userId}`, {
        key: a.key,
        body: { permissions: { domains: false } },
      })
      assert.deepEqual(reduce.body, {
        status: 400,
        status_description: 'The permissions of the main user cannot be reduced',
      })
      const partial = await t.request('PUT', `/account/users/${a.userId}`, {
        key: a.key,
        body: { permissions: { domains: true } },
      })
      assert.equal(partial.status, 200)
      for (const p of PERMISSIONS) assert.equal(partial.body.data.permissions[p], true, p)
      assert.equal(partial.body.data.is_main_user, true)
      assert.equal((await t.request('GET', '/orders', { key: a.key })).status, 200)
    })

    it('lets only the main user change the main user', async () => {
      const manager = await t.subUser(a, { 'account-users': true, domains: true })
      const before = (await t.request('GET', `/account/users/${a.userId}`, { key: a.key })).body.data
      for (const body of [{ firstname: 'Mallory' }, { lastname: 'Taken' }, { permissions: { domains: true } }]) {
        const res = await t.request('PUT', `/account/users/${a.userId}`, { key: manager.key, body })
        assert.deepEqual(
          res.body,
          { status: 403, status_description: 'Only the main user can change the main user' },
          JSON.stringify(body),
        )
        assert.equal(res.status, 403)
        const dry = await t.request('PUT', `/account/users/${a.userId}?test=1`, { key: manager.key, body })
        assert.equal(dry.status, 403)
      }
      assert.deepEqual((await t.request('GET', `/account/users/${a.userId}`, { key: a.key })).body.data, before)
      const own = await t.request('PUT', `/account/users/${a.userId}`, { key: a.key, body: { firstname: 'Owner' } })
      assert.equal(own.status, 200)
    })

    it('lets a sub-user revoke only permissions it holds itself', async () => {
      const manager = await t.subUser(a, { 'account-users': true, domains: true })
      const other = await t.subUser(a, { vps: true, domains: true, 'account-invoices': true })
      // Revoking vps (which the manager lacks) is refused, whatever else the request does.
      for (const permissions of [
        {},
        { domains: true, 'account-invoices': true },
        { vps: false, domains: true, 'account-invoices': true },
      ]) {
        const res = await t.request('PUT', `/account/users/${other.userId}`, {
          key: manager.key,
          body: { permissions },
        })
        assert.deepEqual(
          res.body,
          { status: 400, status_description: 'You cannot revoke a permission you do not have yourself: vps' },
          JSON.stringify(permissions),
        )
        assert.equal(res.status, 400)
      }
      const still = (await t.request('GET', `/account/users/${other.userId}`, { key: a.key })).body.data.permissions
      assert.equal(still.vps, true)
      assert.equal(still['account-invoices'], true)
      // What the manager holds it may take away, leaving the rest as it is.
      const away = await t.request('PUT', `/account/users/${other.userId}`, {
        key: manager.key,
        body: { permissions: { vps: true, 'account-invoices': true } },
      })
      assert.equal(away.status, 200, away.text)
      assert.equal(away.body.data.permissions.domains, false)
      assert.equal(away.body.data.permissions.vps, true)
      assert.equal(away.body.data.permissions['account-invoices'], true)
      // The main user may change anything.
      const main = await t.request('PUT', `/account/users/${other.userId}`, { key: a.key, body: { permissions: {} } })
      assert.equal(main.body.data.permissions.vps, false)
    })

    it('lets a sub-user with account-users manage users, but not grant what it lacks', async () => {
      const manager = await t.subUser(a, { 'account-users': true, domains: true })
      const ok = await t.request('POST', '/account/users', {
        key: manager.key,
        body: newUser(20, { permissions: { domains: true } }),
      })
      assert.equal(ok.status, 200)
      const grant = await t.request('POST', '/account/users', {
        key: manager.key,
        body: newUser(21, { permissions: { vps: true } }),
      })
      assert.deepEqual(grant.body, {
        status: 400,
        status_description: 'You cannot grant a permission you do not have yourself: vps',
      })
      const self = await t.request('PUT', `/account/users/${manager.userId}`, {
        key: manager.key,
        body: { permissions: { 'account-users': true, 'account-invoices': true } },
      })
      assert.equal(self.status, 400)
      // Taking permissions away is allowed.
      const away = await t.request('PUT', `/account/users/${ok.body.data.id}`, {
        key: manager.key,
        body: { permissions: {} },
      })
      assert.equal(away.body.data.permissions.domains, false)
      const denied = await t.subUser(a, { domains: true })
      assert.deepEqual((await t.request('GET', '/account/users', { key: denied.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
    })

    it('creates at most 10 users per account per hour, then answers 429 with Retry-After', async () => {
      const d = await t.account()
      for (let i = 0; i < 10; i++) {
        const r = await t.request('POST', '/account/users', { key: d.key, body: newUser(100 + i) })
        assert.equal(r.status, 200, `user ${i}`)
      }
      const over = await t.request('POST', '/account/users', { key: d.key, body: newUser(111) })
      assert.equal(over.status, 429)
      assert.deepEqual(over.body, {
        status: 429,
        status_description: 'Rate limit exceeded: at most 10 new users per account per hour',
      })
      const retry = Number(over.headers['retry-after'])
      assert.ok(retry > 3000 && retry <= 3600, String(retry))
      // Another account has its own budget.
      const e = await t.account()
      assert.equal((await t.request('POST', '/account/users', { key: e.key, body: newUser(112) })).status, 200)
    })

    it('keeps the limit under concurrent requests', async () => {
      const f = await t.account()
      const answers = await Promise.all(
        Array.from({ length: 14 }, (_, i) =>
          t.request('POST', '/account/users', { key: f.key, body: newUser(200 + i) }),
        ),
      )
      assert.equal(answers.filter((r) => r.status === 200).length, 10)
      assert.equal(answers.filter((r) => r.status === 429).length, 4)
      const list = await t.request('GET', '/account/users?limit=100', { key: f.key })
      assert.equal(list.body.data.pagination.total, 11, 'the main user and exactly 10 sub-users')
    })
  })
})
