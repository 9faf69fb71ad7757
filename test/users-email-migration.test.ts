import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { databaseBefore, type DatabaseBefore } from './helpers/migration.js'
import { hashApiKey, keyPrefix } from '../src/modules/iam/keys.js'

const NEW = '0420-users-email-per-account'
const KEY = 'MigrationKey0000000000000000000000000001'

// The migration that makes e-mail addresses unique per account runs on a database that already has users,
// keys and a ticket: every row stays, keys keep working, and ids are not reused.
forEachDialect((dialect) => {
  describe(`users e-mail per account migration (${dialect})`, () => {
    let old: DatabaseBefore
    let t: TestApp
    let deletedId: number
    let account: { id: number; customer_number: number }
    let mainId: number

    before(async () => {
      old = await databaseBefore(dialect, NEW)
      const db = old.database.db
      const now = new Date().toISOString()
      account = await old.insertAccount()
      const user = (email: string, main: boolean) => old.userRow(account.id, email, main)
      mainId = (
        await db.insertInto('users').values(user('owner@old.test', true)).returning('id').executeTakeFirstOrThrow()
      ).id
      await db.insertInto('users').values(user('Sub@Old.test', false)).execute()
      deletedId = (
        await db.insertInto('users').values(user('gone@old.test', false)).returning('id').executeTakeFirstOrThrow()
      ).id
      await db.deleteFrom('users').where('id', '=', deletedId).execute()
      await db
        .insertInto('api_keys')
        .values({
          account_id: account.id,
          user_id: mainId,
          key_hash: hashApiKey(KEY),
          prefix: keyPrefix(KEY),
          label: 'old',
          expires_at: null,
          allowed_ips: '[]',
          created_at: now,
        })
        .execute()

      assert.deepEqual((await old.migrateRest()).applied, [NEW])
      await old.disconnect()
      t = await startTestApp(dialect, { database: old.config })
    })
    after(async () => {
      await t?.close()
      await old?.close()
    })

    it('keeps users and keys, reuses no id, and lets another account use the same addresses', async () => {
      const who = await t.request('GET', '/whoami', { key: KEY })
      assert.equal(who.status, 200, who.text)
      assert.equal(who.body.data.customer_number, account.customer_number)
      const users = await t.request('GET', '/account/users', { key: KEY })
      assert.deepEqual(
        users.body.data.users.map((u: { email: string }) => u.email),
        ['owner@old.test', 'Sub@Old.test'],
      )

      const body = (email: string) => ({
        email,
        firstname: 'New',
        lastname: 'User',
        password: 'correct horse battery staple',
      })
      const dup = await t.request('POST', '/account/users', { key: KEY, body: body('sub@old.test') })
      assert.deepEqual(dup.body, { status: 400, status_description: 'A user with this e-mail address already exists' })
      const next = await t.request('POST', '/account/users', { key: KEY, body: body('next@old.test') })
      assert.equal(next.status, 200, next.text)
      assert.ok(next.body.data.id > deletedId, "a deleted user's id is not given out again")

      const other = await t.account('Other B.V.')
      const same = await t.request('POST', '/account/users', { key: other.key, body: body('Sub@Old.test') })
      assert.equal(same.status, 200, same.text)

      // The foreign keys still hold: removing the user removes its keys.
      await t.ctx.db.deleteFrom('users').where('id', '=', mainId).execute()
      assert.equal(
        (await t.ctx.db.selectFrom('api_keys').select('id').where('user_id', '=', mainId).execute()).length,
        0,
      )
    })
  })
})
