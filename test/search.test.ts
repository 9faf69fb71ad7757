import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import fc from 'fast-check'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { likeContains, likeEndsWith, MAX_SEARCH_BYTES } from '../src/db/search.js'

/** Stored names with every character LIKE treats specially, and some that are not. */
const STORED = [
  '100%',
  '100 percent',
  'a_b',
  'axb',
  'back\\slash',
  'backslash',
  "it's",
  'say "hi"',
  'UPPER lower',
  'mixed_%_\\',
  'é-accent',
  '😀 smile',
  '',
  'plain',
]

const searchText = fc.oneof(
  fc.string({
    unit: fc.constantFrom('%', '_', '\\', 'a', 'b', 'x', ' ', "'", '"', '0', '1', 'P', 'e', 'r', 'c', 'n', 't'),
    maxLength: 8,
  }),
  // Parts of stored names, cut between code points (a search from a URL is UTF-8: it never holds half a pair).
  fc
    .constantFrom(...STORED.map((s) => [...s]))
    .chain((s) =>
      fc.tuple(fc.nat(s.length), fc.nat(s.length)).map(([i, j]) => s.slice(Math.min(i, j), Math.max(i, j)).join('')),
    ),
)
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('\0', '\ud800', '\udc00', '%', '_', '\\', '\u202e', 'İ', 'ß'), maxLength: 20 }),
  fc.integer({ min: 1000, max: 12_000 }).map((n) => '%_\\'.repeat(n)),
)

forEachDialect((dialect) => {
  describe(`substring search (${dialect})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(dialect)
      await sql`create table like_probe (id integer primary key, name text not null)`.execute(t.ctx.db)
      for (const [i, name] of STORED.entries())
        await sql`insert into like_probe (id, name) values (${i + 1}, ${name})`.execute(t.ctx.db)
    })
    after(() => t.close())

    const find = async (search: string) =>
      (
        await t.ctx.db
          .selectFrom('like_probe' as never)
          .select(sql<string>`name`.as('name'))
          .where(likeContains(sql`lower(name)`, search))
          .execute()
      )
        .map((r) => (r as { name: string }).name)
        .sort()

    it('matches exactly the names that contain the search, `%`, `_` and `\\` as themselves', async () => {
      await fc.assert(
        fc.asyncProperty(searchText, async (search) => {
          const expected = STORED.filter((s) => s.toLowerCase().includes(search.toLowerCase())).sort()
          assert.deepEqual(await find(search), expected, JSON.stringify(search))
        }),
        { seed: 20261123, numRuns: 150 },
      )
    })

    it('matches exactly the names that end with a suffix, `%`, `_` and `\\` as themselves', async () => {
      await fc.assert(
        fc.asyncProperty(
          searchText.map((s) => s.toLowerCase()),
          async (suffix) => {
            const rows = await t.ctx.db
              .selectFrom('like_probe' as never)
              .select(sql<string>`name`.as('name'))
              .where(likeEndsWith(sql`lower(name)`, suffix))
              .execute()
            const expected = STORED.filter((s) => s.toLowerCase().endsWith(suffix)).sort()
            assert.deepEqual(rows.map((r) => (r as { name: string }).name).sort(), expected, JSON.stringify(suffix))
          },
        ),
        { seed: 20261123, numRuns: 100 },
      )
    })

    it('answers any text, NUL, lone surrogates and huge ones included, with rows and never an error', async () => {
      await fc.assert(
        fc.asyncProperty(anyText, async (search) => {
          const rows = await find(search)
          assert.ok(Array.isArray(rows))
          if (search.includes('\0') || Buffer.byteLength(search) > MAX_SEARCH_BYTES) assert.deepEqual(rows, [])
        }),
        { seed: 20261123, numRuns: 100 },
      )
    })
  })
})
