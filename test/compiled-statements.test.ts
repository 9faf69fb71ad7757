import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { sql } from 'kysely'
import { compiledOnce } from '../src/db/compiled.js'
import { openDatabase, type Database, type Db } from '../src/db/database.js'
import { migrate } from '../src/db/migrate.js'
import { containsPattern, likeContains, matches } from '../src/db/search.js'
import { forEachDialect, processDatabase, whileSchemasStay, type ProcessDatabase } from './helpers/app.js'

/**
 * src/db/compiled.ts on both databases: a statement compiled once answers as the same statement built afresh with
 * each call's values, compiles once per shape, runs inside a transaction, and refuses a build that computes with a
 * value.
 */
forEachDialect((dialect) => {
  describe(`statements compiled once (${dialect})`, () => {
    let place: ProcessDatabase
    let database: Database
    let db: Db
    before(async () => {
      place = await processDatabase(dialect)
      database = openDatabase(place.database)
      db = database.db
      const schema = place.database.dialect === 'postgres' ? place.database.schema : null
      await whileSchemasStay(dialect, () => migrate(db, schema))
      const now = new Date().toISOString()
      const names = ['alpha', 'Beta', 'gamma_1', 'del%ta', 'eps\\ilon', 'zeta', 'ALPHA two']
      for (const [i, name] of names.entries())
        await db
          .insertInto('accounts')
          .values({ customer_number: 700000 + i, name, status: 'active', created_at: now })
          .execute()
    })
    after(async () => {
      await database?.close()
      await place?.remove()
    })

    // The shape decides the text: with a search or without; the values fill it in.
    const search = compiledOnce((q: Db, shape: { search: boolean }, values: (number | string)[]) => {
      let s = q
        .selectFrom('accounts')
        .select(['customer_number', 'name'])
        .where('customer_number', '>=', values[0] as number)
      if (shape.search) s = s.where(matches(sql`lower(${sql.ref('name')})`, values[1]))
      return s.orderBy('customer_number')
    })
    const fresh = (min: number, text: string | undefined) => {
      let s = db.selectFrom('accounts').select(['customer_number', 'name']).where('customer_number', '>=', min)
      if (text !== undefined) s = s.where(likeContains(sql`lower(${sql.ref('name')})`, text))
      return s.orderBy('customer_number').execute()
    }

    it('answers as the statement built afresh, for any values', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 699998, max: 700008 }),
          fc.option(fc.oneof(fc.constantFrom('a', 'ALPHA', '%', '_', '\\', 'ta'), fc.string({ maxLength: 4 })), {
            nil: undefined,
          }),
          async (min, text) => {
            const pattern = text === undefined ? undefined : containsPattern(text)
            // NUL matches nothing (the search helpers answer `1 = 0` without a value).
            fc.pre(pattern !== null)
            const once = await search(db, { search: text !== undefined }, pattern ? [min, pattern] : [min])
            assert.deepEqual(once, await fresh(min, text))
          },
        ),
        { numRuns: 60 },
      )
    })

    it('compiles once per shape and database', async () => {
      const count = compiledOnce((q: Db, _shape: undefined, [n]: [number]) =>
        q.selectFrom('accounts').select(sql<number>`count(*)`.as('n')).where('customer_number', '>=', n),
      )
      const before = database.compiles()
      const answers = []
      for (const n of [700000, 700003, 700006, 0]) answers.push(Number((await count(db, undefined, [n]))[0].n))
      assert.deepEqual(answers, [7, 4, 1, 7])
      assert.equal(database.compiles() - before, 1)
    })

    it('runs in a transaction, which sees its own writes', async () => {
      const named = compiledOnce((q: Db, _shape: undefined, [name]: [string]) =>
        q.selectFrom('accounts').select('customer_number').where('name', '=', name),
      )
      await db
        .transaction()
        .execute(async (trx) => {
          await trx
            .insertInto('accounts')
            .values({ customer_number: 799999, name: 'in a transaction', status: 'active', created_at: 'x' })
            .execute()
          assert.deepEqual(await named(trx, undefined, ['in a transaction']), [{ customer_number: 799999 }])
          throw new Error('roll back')
        })
        .catch((err: Error) => assert.equal(err.message, 'roll back'))
      assert.deepEqual(await named(db, undefined, ['in a transaction']), [])
    })

    it('refuses a build that computes with a value in JavaScript', async () => {
      const wrong = compiledOnce((q: Db, _shape: undefined, [n]: [number]) =>
        q
          .selectFrom('accounts')
          .select('name')
          .where('customer_number', '=', n + 1),
      )
      await assert.rejects(wrong(db, undefined, [700000]), /computed with one of its values/)
      const text = compiledOnce((q: Db, _shape: undefined, [s]: [string]) =>
        q.selectFrom('accounts').select('name').where('name', '=', `${s}%`),
      )
      await assert.rejects(text(db, undefined, ['a']), /computed with one of its values/)
    })
  })
})
