import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { describeWithEnv } from './helpers/app.js'
import { preparedStatements } from '../src/db/prepared.js'

/**
 * src/db/prepared.ts against a real PostgreSQL: which statements become named prepared statements, and that a
 * schema changed under one by another connection (another instance's migration) does not fail a read.
 */
describeWithEnv(['HOSTAPI_TEST_PG_URL'], 'named prepared statements (postgres)', () => {
  const url = process.env.HOSTAPI_TEST_PG_URL!
  const schema = `prep_${process.pid}_${randomBytes(3).toString('hex')}`
  const clients: pg.Client[] = []
  const connect = async () => {
    const c = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
    await c.connect()
    clients.push(c)
    return c
  }
  let admin: pg.Client

  before(async () => {
    admin = await connect()
    await admin.query(`create schema ${schema}`)
    await admin.query('create table t (id integer primary key, v text)')
    await admin.query(`insert into t values (1, 'one'), (2, 'two')`)
  })
  after(async () => {
    await admin.query(`drop schema if exists ${schema} cascade`)
    await Promise.all(clients.map((c) => c.end()))
  })

  const preparedOn = async (c: pg.Client) =>
    (await c.query<{ statement: string }>('select statement from pg_prepared_statements')).rows.map((r) => r.statement)

  it('names a parameterised text from its second use, and runs it prepared after', async () => {
    const c = await connect()
    const prepared = preparedStatements()
    prepared.attach(c)
    const text = 'select v from t where id = $1'
    for (const id of [1, 2, 1]) assert.equal((await c.query(text, [id])).rows.length, 1)
    assert.deepEqual(prepared.counts(), { unnamed: 1, named: 2 })
    assert.deepEqual(await preparedOn(c), [text])
  })

  it('leaves statements without parameters unnamed, several in one text included', async () => {
    const c = await connect()
    const prepared = preparedStatements()
    prepared.attach(c)
    for (let i = 0; i < 3; i++) await c.query('select 1; select 2', [])
    assert.deepEqual(prepared.counts(), { unnamed: 0, named: 0 })
    assert.deepEqual(await preparedOn(c), [])
  })

  it('names no more than its limit of texts; the others still run', async () => {
    const c = await connect()
    const prepared = preparedStatements(2)
    prepared.attach(c)
    for (let round = 0; round < 3; round++)
      for (let i = 0; i < 4; i++)
        assert.equal((await c.query(`select v, ${i} as n from t where id = $1`, [1])).rows[0].n, i)
    assert.equal((await preparedOn(c)).length, 2)
    assert.deepEqual(prepared.counts(), { unnamed: 4 + 2 * 2, named: 2 * 2 })
  })

  it('a column added by another connection: the read is prepared again and answers', async () => {
    const c = await connect()
    const prepared = preparedStatements()
    prepared.attach(c)
    const text = 'select * from t where id = $1'
    for (let i = 0; i < 3; i++) await c.query(text, [1])
    await admin.query('alter table t add column extra text')
    const { rows } = await c.query(text, [1])
    assert.deepEqual(Object.keys(rows[0]), ['id', 'v', 'extra'])
    assert.equal((await preparedOn(c)).length, 2)
    // A text named after that takes a name of its own.
    for (let i = 0; i < 2; i++)
      assert.equal((await c.query('select v from t where id = $1 and v is not null', [2])).rows[0].v, 'two')
    assert.equal((await preparedOn(c)).length, 3)
  })

  it('inside a transaction runs statements unnamed: a table changed between two of them fails neither', async () => {
    const c = await connect()
    const prepared = preparedStatements()
    prepared.attach(c)
    const text = 'select * from t where id > $1'
    for (let i = 0; i < 3; i++) await c.query(text, [0])
    const named = prepared.counts().named
    await c.query('begin', [])
    assert.equal((await c.query(text, [0])).rows.length, 2)
    await c.query('alter table t add column more text', [])
    assert.deepEqual(Object.keys((await c.query(text, [0])).rows[0]), ['id', 'v', 'extra', 'more'])
    await c.query('commit', [])
    assert.equal(prepared.counts().named, named, 'nothing named inside the transaction')
    assert.deepEqual(Object.keys((await c.query(text, [0])).rows[0]), ['id', 'v', 'extra', 'more'])
  })
})
