import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeTicket } from './helpers/fixtures/account.js'

// `?test=1` on the account area's mutating calls: the normal validation and answer, nothing stored, nothing sent.
forEachDialect((dialect) => {
  describe(`account dry runs (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    const snapshot = async () => {
      const db = t.ctx.db
      const count = async (table: 'users' | 'tickets' | 'ticket_messages' | 'jobs' | 'outbox' | 'account_profiles') =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        )
      return {
        users: await count('users'),
        tickets: await count('tickets'),
        messages: await count('ticket_messages'),
        jobs: await count('jobs'),
        outbox: await count('outbox'),
        profiles: await count('account_profiles'),
        profile: (await t.request('GET', '/account/profile', { key: a.key })).body.data,
        paymethods: (await t.request('GET', '/account/paymethods', { key: a.key })).body.data,
      }
    }
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account()
    })
    after(() => t.close())

    it('validates and answers as usual for every mutating route, and changes nothing', async () => {
      const ticket = await makeTicket(t, a)
      const sub = await t.subUser(a, { domains: true })
      const pm = await t.ctx.services.paymethods.add(a.accountId, {
        type: 'creditcard',
        holder: 'A',
        account: '4111111111111111',
      })
      const profile = (await t.request('GET', '/account/profile', { key: a.key })).body.data
      const before = await snapshot()

      const put = await t.request('PUT', '/account/profile?test=1', {
        key: a.key,
        body: {
          ...profile,
          address: 'Dry street',
          house_number: '1',
          zipcode: '1000 AA',
          city: 'Dryton',
          phone: '201234567',
          email: 'dry@example.org',
        },
      })
      assert.equal(put.status, 200)
      assert.equal(put.body.data.city, 'Dryton')
      assert.equal(put.body.data.pending_email, 'dry@example.org')

      const setPm = await t.request('PUT', '/account/paymethods?test=1', {
        key: a.key,
        body: { default_paymethod_id: pm },
      })
      assert.deepEqual(setPm.body.data, { default: 'creditcard', default_paymethod_id: pm })

      const user = await t.request('POST', '/account/users?test=1', {
        key: a.key,
        body: {
          email: 'dry-user@example.com',
          firstname: 'Dry',
          lastname: 'Run',
          password: 'a long enough password',
          permissions: { vps: true },
        },
      })
      assert.equal(user.status, 200)
      assert.equal(user.body.data.id, 0)
      assert.equal(user.body.data.permissions.vps, true)

      const upd = await t.request('PUT', `/account/users/${sub.userId}?test=1`, {
        key: a.key,
        body: { firstname: 'Changed', permissions: { vps: true } },
      })
      assert.equal(upd.body.data.firstname, 'Changed')
      assert.equal(upd.body.data.permissions.vps, true)
      assert.equal(upd.body.data.permissions.domains, false)

      const newTicket = await t.request('POST', '/account/tickets?test=1', {
        key: a.key,
        body: { subject: 'Dry', message: '<p>x<script>y()</script></p>', department: 'sales' },
      })
      assert.equal(newTicket.status, 200)
      assert.equal(newTicket.body.data.ticket_number, 0)
      assert.equal(newTicket.body.data.thread[0].body, '<p>x</p>')

      const reply = await t.request('POST', `/account/tickets/${ticket}/reply?test=1`, {
        key: a.key,
        body: { message: 'dry reply' },
      })
      assert.deepEqual(
        reply.body.data.thread.map((m: { body: string }) => m.body),
        ['Hello', 'dry reply'],
      )

      const after = await snapshot()
      assert.deepEqual(after, before)
      assert.equal((await t.request('GET', `/account/users/${sub.userId}`, { key: a.key })).body.data.firstname, 'Sub')
    })

    it('still answers every validation and business error in a dry run', async () => {
      const weak = await t.request('POST', '/account/users?test=1', {
        key: a.key,
        body: { email: 'x@example.com', firstname: 'A', lastname: 'B', password: 'short' },
      })
      assert.deepEqual(weak.body, {
        status: 400,
        status_description: 'The password is too weak: use at least 10 characters',
      })
      const taken = await t.request('POST', '/account/users?test=1', {
        key: a.key,
        body: {
          email: (await t.request('GET', '/account/profile', { key: a.key })).body.data.email,
          firstname: 'A',
          lastname: 'B',
          password: 'a long enough password',
        },
      })
      assert.deepEqual(taken.body, {
        status: 400,
        status_description: 'A user with this e-mail address already exists',
      })
      const pm = await t.request('PUT', '/account/paymethods?test=1', {
        key: a.key,
        body: { default_paymethod_id: '999999' },
      })
      assert.deepEqual(pm.body, { status: 400, status_description: 'Unknown payment method: 999999' })
      const missing = await t.request('POST', '/account/tickets/999999999/reply?test=1', {
        key: a.key,
        body: { message: 'x' },
      })
      assert.deepEqual(missing.body, { status: 404, status_description: 'Ticket not found' })
      const main = await t.request('PUT', `/account/users/${a.userId}?test=1`, {
        key: a.key,
        body: { permissions: { vps: false } },
      })
      assert.deepEqual(main.body, {
        status: 400,
        status_description: 'The permissions of the main user cannot be reduced',
      })
      const token = await t.request('POST', '/account/profile/confirm-email?test=1', {
        key: a.key,
        body: { token: 'x'.repeat(20) },
      })
      assert.deepEqual(token.body, { status: 400, status_description: 'Invalid or expired verification code' })
      const bad = await t.request('PUT', '/account/paymethods?test=yes', {
        key: a.key,
        body: { paymethod: 'bank_transfer' },
      })
      assert.equal(bad.status, 400)
    })
  })
})
