import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, type TestAccount, type TestApp } from './helpers/app.js'
import { NO_KEY, startAdminTestApp } from './helpers/admin.js'

forEachDialect((dialect) => {
  describe(`admin API: accounts, users and keys (${dialect})`, () => {
    let t: TestApp
    let token: string
    let a: TestAccount
    const adm = (method: string, p: string, body?: unknown, tok = token) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${tok}` } })

    before(async () => {
      ;({ t, token, a } = await startAdminTestApp(dialect))
    })
    after(() => t.close())

    it('creates, lists, finds, suspends and unsuspends accounts', async () => {
      const created = await adm('POST', '/accounts', {
        name: 'Acme B.V.',
        email: 'Owner@Acme.test',
        firstname: 'Ann',
        lastname: 'Owner',
        key: { label: 'ci' },
      })
      assert.equal(created.status, 200, created.text)
      assert.equal(created.body.status_description, 'Account created')
      const acme = created.body.data
      assert.equal(acme.name, 'Acme B.V.')
      assert.equal(acme.status, 'active')
      assert.equal(acme.users.length, 1)
      assert.equal(acme.users[0].is_main_user, true)
      assert.equal(acme.users[0].permissions.domains, true)
      assert.match(acme.api_key, /^[A-Za-z0-9]{40}$/)
      assert.equal(acme.keys[0].prefix, acme.api_key.slice(0, 8))
      assert.equal(acme.keys[0].label, 'ci')

      const who = await t.request('GET', '/whoami', { key: acme.api_key })
      assert.equal(who.body.data.customer_number, acme.customer_number)

      const dup = await adm('POST', '/accounts', { name: 'Again', email: 'owner@acme.test' })
      assert.deepEqual(dup.body, { status: 400, status_description: 'A user with this e-mail address already exists' })
      const bad = await adm('POST', '/accounts', { name: 'X', email: 'not-an-address' })
      assert.equal(bad.status, 400)

      const search = await adm('GET', '/accounts?search=ACME')
      assert.deepEqual(
        search.body.data.accounts.map((x: { customer_number: number }) => x.customer_number),
        [acme.customer_number],
      )
      const byMail = await adm('GET', '/accounts?search=owner%40acme')
      assert.equal(byMail.body.data.pagination.total, 1)
      const page = await adm('GET', '/accounts?limit=1&page=2')
      assert.equal(page.body.data.accounts.length, 1)
      assert.equal(page.body.data.pagination.total_pages, page.body.data.pagination.total)
      assert.deepEqual((await adm('GET', '/accounts?page=99')).body, {
        status: 400,
        status_description: 'Page out of range',
      })

      const got = await adm('GET', `/accounts/${acme.customer_number}`)
      assert.equal(got.body.data.keys.length, 1)
      assert.equal(got.body.data.keys[0].last_used_ip, '127.0.0.1')
      assert.deepEqual((await adm('GET', '/accounts/999999')).body, {
        status: 404,
        status_description: 'Account not found',
      })

      const susp = await adm('PUT', `/accounts/${acme.customer_number}/suspend`)
      assert.equal(susp.body.data.status, 'suspended')
      assert.deepEqual((await t.request('GET', '/whoami', { key: acme.api_key })).body, NO_KEY)
      assert.equal(
        (await adm('GET', '/accounts?status=suspended')).body.data.accounts[0].customer_number,
        acme.customer_number,
      )
      const unsusp = await adm('PUT', `/accounts/${acme.customer_number}/unsuspend`)
      assert.equal(unsusp.body.data.status, 'active')
      assert.equal((await t.request('GET', '/whoami', { key: acme.api_key })).status, 200)
    })

    it('creates users and keys, sets whitelists and expiry, revokes keys', async () => {
      const cn = a.customerNumber
      const user = await adm('POST', `/accounts/${cn}/users`, {
        email: 'dns@tenant-a.test',
        firstname: 'Dana',
        permissions: ['domains'],
      })
      assert.equal(user.status, 200, user.text)
      assert.equal(user.body.data.is_main_user, false)
      assert.equal(user.body.data.permissions.domains, true)
      assert.equal(user.body.data.permissions.vps, false)

      const key = await adm('POST', `/accounts/${cn}/keys`, {
        user_id: user.body.data.id,
        label: 'dns',
        allowed_ips: ['127.0.0.1', '2001:db8::/32'],
      })
      assert.equal(key.status, 200, key.text)
      const k = key.body.data
      assert.deepEqual(k.allowed_ips, ['127.0.0.1', '2001:db8::/32'])
      assert.equal(k.user_id, user.body.data.id)
      assert.equal((await t.request('GET', '/whoami', { key: k.key })).status, 200)
      // The sub-user has no vps permission.
      assert.deepEqual((await t.request('GET', '/vps/ssh-keys', { key: k.key })).body, {
        status: 400,
        status_description: 'No access to this VPS',
      })

      const listed = await adm('GET', `/accounts/${cn}/keys`)
      assert.ok(listed.body.data.keys.some((x: { prefix: string }) => x.prefix === k.prefix))
      assert.ok(!JSON.stringify(listed.body).includes(k.key), 'the whole key is never listed')

      const wl = await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/whitelist`, { allowed_ips: ['192.0.2.0/24'] })
      assert.deepEqual(wl.body.data.allowed_ips, ['192.0.2.0/24'])
      assert.deepEqual((await t.request('GET', '/whoami', { key: k.key })).body, {
        status: 401,
        status_description: 'Remote IP address is not found in the API key whitelist (127.0.0.1)',
      })
      assert.deepEqual(
        (await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/whitelist`, { allowed_ips: ['300.1.1.1'] })).body,
        { status: 400, status_description: 'Invalid IP address or CIDR range: 300.1.1.1' },
      )
      await adm('PUT', `/accounts/${cn}/keys/${k.id}/whitelist`, { allowed_ips: [] })
      assert.equal((await t.request('GET', '/whoami', { key: k.key })).status, 200)

      const exp = await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/expiry`, { expires_at: '2001-01-01' })
      assert.equal(exp.body.data.expires_at, '2001-01-01T00:00:00.000Z')
      assert.deepEqual((await t.request('GET', '/whoami', { key: k.key })).body, {
        status: 401,
        status_description: 'API key has expired',
      })
      assert.deepEqual((await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/expiry`, { expires_at: 'soon' })).body, {
        status: 400,
        status_description: 'Invalid expires_at: use YYYY-MM-DD or an ISO 8601 time',
      })
      await adm('PUT', `/accounts/${cn}/keys/${k.prefix}/expiry`, { expires_at: null })
      assert.equal((await t.request('GET', '/whoami', { key: k.key })).status, 200)

      const rev = await adm('DELETE', `/accounts/${cn}/keys/${k.prefix}`)
      assert.equal(rev.status, 200)
      assert.ok(rev.body.data.revoked_at)
      assert.deepEqual((await t.request('GET', '/whoami', { key: k.key })).body, NO_KEY)
      assert.deepEqual((await adm('DELETE', `/accounts/${cn}/keys/nosuchkey`)).body, {
        status: 404,
        status_description: 'API key not found',
      })

      // A key for a user of another account is refused like a missing user.
      const other = await t.account('Tenant Z')
      assert.deepEqual((await adm('POST', `/accounts/${cn}/keys`, { user_id: other.userId })).body, {
        status: 404,
        status_description: 'User not found',
      })
    })
  })
})
