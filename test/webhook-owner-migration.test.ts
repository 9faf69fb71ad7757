import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { Migrator } from 'kysely'
import { forEachDialect, freshDatabase, tempDir } from './helpers/app.js'
import { migrate, openDatabase, type Database } from '../src/db/database.js'
import { migrations } from '../src/db/migrations/index.js'
import { permissionMap } from '../src/modules/iam/permissions.js'
import { emitEvent } from '../src/modules/webhooks/webhook-events.js'

const NEW = '0510-webhook-owner'

// The migration that gives webhook endpoints an owner runs on a database that already has endpoints: each gets its
// account's main user, so it keeps receiving every event.
forEachDialect((dialect) => {
  describe(`webhook owner migration (${dialect})`, () => {
    let dir: string
    let fresh: Awaited<ReturnType<typeof freshDatabase>>
    let database: Database
    let accountId: number
    let mainId: number
    let endpointId: number

    before(async () => {
      dir = tempDir()
      fresh = await freshDatabase(dialect, dir)
      database = openDatabase(fresh.database)
      const db = database.db
      const schema = fresh.database.dialect === 'postgres' ? fresh.database.schema : undefined
      const older = Object.fromEntries(Object.entries(migrations).filter(([name]) => name !== NEW))
      const migrator = new Migrator({
        db,
        provider: { getMigrations: async () => older },
        allowUnorderedMigrations: true,
        ...(schema ? { migrationTableSchema: schema } : {}),
      })
      const { error } = await migrator.migrateToLatest()
      if (error) throw error

      const now = new Date().toISOString()
      accountId = (
        await db
          .insertInto('accounts')
          .values({ customer_number: 100001, name: 'Old B.V.', status: 'active', created_at: now })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id
      const user = (email: string, main: boolean) => ({
        account_id: accountId,
        username: email,
        email,
        firstname: 'F',
        lastname: 'L',
        password_hash: null,
        is_main_user: main ? 1 : 0,
        two_factor: 0,
        permissions: JSON.stringify(permissionMap(main)),
        created_at: now,
      })
      // A sub-user first: the owner is the main user, not the account's first user.
      await db.insertInto('users').values(user('sub@old.test', false)).execute()
      mainId = (
        await db.insertInto('users').values(user('owner@old.test', true)).returning('id').executeTakeFirstOrThrow()
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
      assert.deepEqual(await migrate(db, schema ?? null), { applied: [NEW], newer: [] })
    })
    after(async () => {
      await database?.close()
      await fresh?.drop()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it("gives every endpoint its account's main user, so it keeps receiving every event", async () => {
      const db = database.db
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
