import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect } from './helpers/app.js'
import { databaseBefore, type DatabaseBefore } from './helpers/migration.js'
import { emitEvent } from '../src/modules/webhooks/webhook-events.js'

const NEW = '0510-webhook-owner'

// The migration that gives webhook endpoints an owner runs on a database that already has endpoints: each gets its
// account's main user, so it keeps receiving every event.
forEachDialect((dialect) => {
  describe(`webhook owner migration (${dialect})`, () => {
    let old: DatabaseBefore
    let accountId: number
    let mainId: number
    let endpointId: number

    before(async () => {
      old = await databaseBefore(dialect, NEW)
      const db = old.database.db
      const now = new Date().toISOString()
      accountId = (await old.insertAccount()).id
      // A sub-user first: the owner is the main user, not the account's first user.
      await db
        .insertInto('users')
        .values(old.userRow(accountId, 'sub@old.test', false))
        .execute()
      mainId = (
        await db
          .insertInto('users')
          .values(old.userRow(accountId, 'owner@old.test', true))
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id
      endpointId = (
        await db
          .insertInto('webhook_endpoints')
          .values({
            account_id: accountId,
            url: 'https://hooks.example.nl/old',
            description: '',
            events: '["*"]',
            enabled: 1,
            secret: 'not opened by this test',
            created_at: now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id
      assert.deepEqual(await old.migrateRest(), { applied: [NEW], newer: [] })
    })
    after(() => old?.close())

    it("gives every endpoint its account's main user, so it keeps receiving every event", async () => {
      const db = old.database.db
      const row = await db
        .selectFrom('webhook_endpoints')
        .select('user_id')
        .where('id', '=', endpointId)
        .executeTakeFirstOrThrow()
      assert.equal(row.user_id, mainId)
      await db
        .transaction()
        .execute((trx) => emitEvent(trx, accountId, 'invoice.issued', { invoice_nr: '1' }, new Date()))
      const deliveries = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
        .select('e.type')
        .where('d.endpoint_id', '=', endpointId)
        .execute()
      assert.deepEqual(
        deliveries.map((d) => d.type),
        ['invoice.issued'],
      )
    })
  })
})
