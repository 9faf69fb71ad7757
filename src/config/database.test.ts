import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import pg from 'pg'
import { ConfigError, loadConfig } from './config.js'

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env)
    return []
  } catch (err) {
    if (err instanceof ConfigError) return err.problems
    throw err
  }
}

describe('DATABASE_URL of PostgreSQL', () => {
  // node-postgres takes one host: a libpq-style host list does not fail over, it fails to parse when connecting.
  it('refuses a list of hosts at start, naming what to do instead', () => {
    const url = 'postgres://app:secret@db1:5432,db2:5432/hostapi?target_session_attrs=read-write'
    assert.throws(() => new pg.Pool({ connectionString: url }).connect(), /Invalid URL/)
    assert.match(problemsOf({ DATABASE_URL: url }).join('\n'), /DATABASE_URL names several hosts: .*proxy/)
  })

  it('takes one host, with or without credentials, port and parameters', () => {
    const host = fc.constantFrom('db', 'db.example.net', '10.0.0.5', '[::1]')
    const auth = fc.constantFrom('', 'app@', 'app:p%2Cw@')
    const port = fc.constantFrom('', ':5432')
    const query = fc.constantFrom('', '?sslmode=require', '?options=-c%20a%3Db,c')
    fc.assert(
      fc.property(fc.constantFrom('postgres', 'postgresql'), auth, host, port, query, (scheme, a, h, p, q) => {
        const url = `${scheme}://${a}${h}${p}/hostapi${q}`
        assert.deepEqual(problemsOf({ DATABASE_URL: url }), [], url)
        assert.equal(loadConfig({ DATABASE_URL: url }).database.dialect, 'postgres')
      }),
    )
  })

  it('reads HOSTAPI_DB_CONNECT_TIMEOUT_MS, 5000 unless set', () => {
    const url = 'postgres://db/hostapi'
    const timeout = (env: Record<string, string>) => {
      const { database } = loadConfig({ DATABASE_URL: url, ...env })
      return database.dialect === 'postgres' ? database.connectTimeoutMs : null
    }
    assert.equal(timeout({}), 5000)
    assert.equal(timeout({ HOSTAPI_DB_CONNECT_TIMEOUT_MS: '1500' }), 1500)
    assert.match(problemsOf({ DATABASE_URL: url, HOSTAPI_DB_CONNECT_TIMEOUT_MS: '0' }).join(), /CONNECT_TIMEOUT_MS/)
  })
})
