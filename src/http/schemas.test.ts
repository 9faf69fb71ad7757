import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import fc from 'fast-check'
import { ApiError } from '../errors.js'
import { errorsPlugin } from './plugins/errors.js'
import { MAX_LIMIT, MAX_PAGE, PageQuery, pageOf, pagination } from './schemas.js'

const RUNS = { seed: 20261123, numRuns: 1500 }

/** A query value as a client may send it: numbers in every spelling, and any text. */
const value = fc.oneof(
  fc.integer({ min: -5, max: 200 }).map(String),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.constantFrom(
    '1e20',
    '1e308',
    '1e309',
    '2147483647',
    '2147483648',
    '9007199254740993',
    'Infinity',
    '-Infinity',
    'NaN',
    '-0',
    '0x10',
    '0b1',
    '0o7',
    '1_000',
    ' 1',
    '1 ',
    '+1',
    '1.0',
    '1.',
    '.5',
    '١',
    '',
    '[]',
    '{}',
    'true',
    'null',
    '%',
    '%00',
    '%zz',
    '1%00',
  ),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
)

/** Percent-encodes the UTF-8 bytes of any text (a lone surrogate goes out as U+FFFD). */
const encode = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')

describe('page and limit of paged lists (properties)', () => {
  let app: FastifyInstance
  before(async () => {
    app = Fastify()
    await app.register(errorsPlugin)
    app.get('/items', { schema: { querystring: Type.Object(PageQuery) } }, async (req) => {
      const page = pageOf(req.query as { page?: number; limit?: number })
      return { ...page, pagination: pagination(page, 10_000) }
    })
    await app.ready()
  })
  after(() => app.close())

  it('answers any page and limit with a page or a 400 naming the problem', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('page', 'limit', 'search', 'PAGE'), value, fc.boolean()), { maxLength: 4 }),
        async (params) => {
          const query = params.map(([k, v, raw]) => `${k}=${raw ? v.replace(/[&#\s]/g, '') : encode(v)}`).join('&')
          const r = await app.inject({ method: 'GET', url: `/items?${query}` })
          const body = r.json() as {
            status?: number
            status_description?: string
            page?: number
            limit?: number
            offset?: number
          }
          if (r.statusCode === 200) {
            assert.ok(Number.isSafeInteger(body.page) && body.page! >= 1 && body.page! <= MAX_PAGE, query)
            assert.ok(Number.isSafeInteger(body.limit) && body.limit! >= 1 && body.limit! <= MAX_LIMIT, query)
            assert.equal(body.offset, (body.page! - 1) * body.limit!)
          } else {
            assert.equal(r.statusCode, 400, `${query}: ${r.body}`)
            assert.match(
              body.status_description!,
              /^(Invalid (page|limit|search)|Missing|Page out of range)/,
              `${query}: ${r.body}`,
            )
          }
        },
      ),
      RUNS,
    )
  })

  it('checks numbers handed to pageOf directly: a page, or an ApiError', () => {
    const n = fc.oneof(
      fc.double(),
      fc.integer(),
      fc.constantFrom(undefined, 0, -0, 1, MAX_PAGE, MAX_PAGE + 1, Number.MAX_SAFE_INTEGER, NaN, Infinity),
    )
    fc.assert(
      fc.property(n, n, (page, limit) => {
        try {
          const p = pageOf({ page, limit })
          assert.ok(Number.isSafeInteger(p.offset) && p.offset >= 0)
        } catch (err) {
          assert.ok(err instanceof ApiError && err.status === 400, String(err))
        }
      }),
      RUNS,
    )
  })
})
