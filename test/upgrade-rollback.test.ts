import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import pino from 'pino'
import {
  describeWithEnv,
  forEachDialect,
  processDatabase,
  rawRows,
  startTestApp,
  type ProcessDatabase,
  type TestAccount,
  type TestApp,
  whileSchemasStay,
} from './helpers/app.js'
import { runCli, spawnServer } from './helpers/process.js'
import { migrations } from '../src/db/migrations/index.js'
import type { AnyDb, MigrationModule } from '../src/db/migrations/helpers.js'
import { openDatabase, type Dialect } from '../src/db/database.js'
import { migrate } from '../src/db/migrate.js'
import { eventually } from './helpers/wait.js'

// The upgrade and rollback procedure of docs/upgrades.md, run: release N is this code with its migrations, release N+1 adds an
// expand migration, release N+2 a contract of that expand. An instance of N runs on N+1's schema (rolling upgrade,
// rollback of the code) and says so; on N+2's schema it refuses to start, with one line.
const EXPAND = '9001-upgrade-expand'
const CONTRACT = '9002-upgrade-contract'

const expand: MigrationModule = {
  kind: 'expand',
  async up(db: AnyDb) {
    // A table the older code writes and reads gets a column (with a default), and a table of its own appears.
    await db.schema
      .alterTable('dns_templates')
      .addColumn('upgrade_note', 'text', (c) => c.notNull().defaultTo(''))
      .execute()
    await db.schema
      .createTable('upgrade_probe')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .execute()
  },
}
const contract: MigrationModule = {
  kind: 'contract',
  contracts: EXPAND,
  async up(db: AnyDb) {
    await db.schema.dropTable('upgrade_probe').execute()
  },
}

const releaseN = migrations
const releaseN1 = { ...migrations, [EXPAND]: expand }
const releaseN2 = { ...releaseN1, [CONTRACT]: contract }

const NEWER_LINE = /database has (\d+) newer migrations?, all compatible with this version/

/** A logger whose lines the test reads. */
function capturing() {
  const lines: string[] = []
  return { lines, log: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }) }
}

describeWithEnv(['HOSTAPI_TEST_PG_URL'], 'rolling upgrade and rollback: two instances on one PostgreSQL', () => {
  let place: ProcessDatabase
  const running = new Set<TestApp>()
  before(async () => {
    place = await processDatabase('postgres')
  })
  after(async () => {
    for (const app of running) await app.close()
    await place.remove()
  })

  const start = async (release: Record<string, MigrationModule>, log = capturing()) => {
    const app = await startTestApp('postgres', { database: place.database, migrations: release, log: log.log })
    running.add(app)
    return { app, lines: log.lines }
  }
  const stop = async (app: TestApp) => {
    running.delete(app)
    await app.close()
  }

  it('upgrades one instance while the other serves, restarts the old one, and rolls back', async () => {
    let one = (await start(releaseN)).app
    let two = (await start(releaseN)).app
    const a: TestAccount = await one.account()

    // The load balancer: requests go to the instances in service, writes and reads of a table the expand changes.
    let serving: TestApp[] = [one, two]
    const failures: string[] = []
    const served = new Map<TestApp, number>()
    let stopped = false
    const inFlight = new Map<TestApp, number>()
    const client = async (c: number) => {
      for (let i = 0; !stopped; i++) {
        const app = serving[i % serving.length]
        inFlight.set(app, (inFlight.get(app) ?? 0) + 1)
        try {
          const r =
            i % 2
              ? await app.request('GET', '/domains/dns-templates', { key: a.key })
              : await app.request('POST', '/domains/dns-templates', {
                  key: a.key,
                  body: { alias: `t${c}-${i}`, records: [{ type: 'A', name: '', value: '192.0.2.1' }] },
                })
          if (r.status === 200) served.set(app, (served.get(app) ?? 0) + 1)
          else failures.push(`${r.status} ${r.text}`)
        } catch (err) {
          failures.push(String(err))
        } finally {
          inFlight.set(app, (inFlight.get(app) ?? 0) - 1)
        }
      }
    }
    const clients = [0, 1].map(client)
    /** Waits until `app` answered a few more requests. */
    const serves = async (app: TestApp) => {
      const from = served.get(app) ?? 0
      const more = () => assert.ok((served.get(app) ?? 0) >= from + 5, failures.slice(0, 3).join('; '))
      await eventually(more, { what: 'the instance serves requests', timeoutMs: 60_000, intervalMs: 5 })
    }
    /** Takes `from` out of service, stops it, starts `release` in its place and puts it in service. */
    const replace = async (from: TestApp, release: Record<string, MigrationModule>) => {
      serving = serving.filter((x) => x !== from)
      // Drained: the requests it was given are answered before it stops.
      await eventually(() => (inFlight.get(from) ?? 0) === 0, { what: 'its requests are answered', intervalMs: 1 })
      await stop(from)
      const next = await start(release)
      serving = [...serving, next.app]
      await serves(next.app)
      return next
    }
    try {
      await serves(one)
      await serves(two)

      // Upgrade: the first instance of N+1 migrates while `one`, of N, keeps serving on the new schema.
      two = (await replace(two, releaseN1)).app
      await serves(one)
      const columns = await rawRows(
        place.database,
        `select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'dns_templates' and column_name = 'upgrade_note'`,
      )
      assert.equal(columns.length, 1, 'the expand migration ran')

      // An instance of N restarted meanwhile starts, and says so.
      const restarted = await replace(one, releaseN)
      one = restarted.app
      assert.ok(
        restarted.lines.some((l) => NEWER_LINE.exec(l)?.[1] === '1' && l.includes(EXPAND)),
        restarted.lines.join('\n'),
      )
      // The upgrade goes on: `one` becomes N+1 too.
      one = (await replace(one, releaseN1)).app

      // Rollback of the code: each instance replaced by N, one at a time.
      const back = await replace(two, releaseN)
      two = back.app
      assert.ok(
        back.lines.some((l) => NEWER_LINE.test(l)),
        back.lines.join('\n'),
      )
      one = (await replace(one, releaseN)).app
      await serves(two)
    } finally {
      stopped = true
      await Promise.all(clients)
    }
    assert.deepEqual(failures, [])
  })
})

describeWithEnv(['HOSTAPI_TEST_PG_URL'], 'instances of two releases starting at once on one PostgreSQL', () => {
  it('both start, whichever migrates first', async () => {
    for (let round = 0; round < 3; round++) {
      const place = await processDatabase('postgres')
      const [older, newer] = [openDatabase(place.database), openDatabase(place.database)]
      try {
        const schema = place.database.dialect === 'postgres' ? place.database.schema : null
        const [n, n1] = await whileSchemasStay('postgres', () =>
          Promise.all([migrate(older.db, schema, releaseN), migrate(newer.db, schema, releaseN1)]),
        )
        // Release N ran all or none of the migrations (N+1 ran the rest) and found N+1's expand when it ran after it.
        assert.ok(n.newer.length === 0 || n.newer[0] === EXPAND, JSON.stringify(n))
        assert.deepEqual([...n.applied, ...n1.applied].sort(), Object.keys(releaseN1).sort())
        assert.deepEqual(await whileSchemasStay('postgres', () => migrate(older.db, schema, releaseN)), {
          applied: [],
          newer: [EXPAND],
        })
      } finally {
        await older.close()
        await newer.close()
        await place.remove()
      }
    }
  })
})

forEachDialect((dialect: Dialect) => {
  describe(`an instance of an older release on a newer schema (${dialect})`, () => {
    let place: ProcessDatabase
    before(async () => {
      place = await processDatabase(dialect)
    })
    after(() => place.remove())

    /** Runs a release in this process until it is ready, and stops it: what its upgrade leaves in the database. */
    const runRelease = async (release: Record<string, MigrationModule>) => {
      const log = capturing()
      const app = await startTestApp(dialect, { database: place.database, migrations: release, log: log.log })
      await app.close()
      return log.lines
    }
    const env = () => ({ ...place.env, HOSTAPI_PORT: '0', HOSTAPI_DNS_PORT: '0', HOSTAPI_DEMO: '0', HOSTAPI_JOBS: '0' })

    it('starts on the schema of the next release (its expand migrations), and says so', async () => {
      await runRelease(releaseN1)
      const migrate = await runCli(env(), 'migrate')
      assert.equal(migrate.code, 0, migrate.err)
      assert.equal(
        migrate.out,
        `database is up to date\ndatabase has 1 newer migration, all compatible with this version: ${EXPAND}\n`,
      )

      const server = spawnServer({ ...env(), HOSTAPI_LOG_LEVEL: 'info' })
      try {
        // A process started from the sources, on a busy machine, may take a while.
        const [line] = await server.waitFor(NEWER_LINE, 120_000)
        assert.ok(line.length > 0)
        assert.match(server.lines.find((l) => NEWER_LINE.test(l)) ?? '', new RegExp(EXPAND))
        await server.waitFor(/^hostapi listening on /, 120_000)
      } finally {
        server.child.kill('SIGTERM')
        await server.exited
      }
    })

    it('refuses to start, with one line, on a contract of an expand it does not know', async () => {
      await runRelease(releaseN2)
      const expected =
        `The database has migration ${CONTRACT} of a newer hostapi, and this version cannot run on it ` +
        `(it contracts ${EXPAND}, which this version does not know): start the newer version, or restore the ` +
        'database backup taken before the upgrade (docs/upgrades.md)\n'

      const server = spawnServer(env())
      const { code } = await server.exited
      assert.equal(`${server.startError()}\n`, expected)
      assert.equal(code, 2)
      const migrate = await runCli(env(), 'migrate')
      assert.equal(migrate.err, expected)
      assert.equal(migrate.code, 2)

      // Release N+1 knows the expand this contract completes: it runs on N+2's schema.
      const lines = await runRelease(releaseN1)
      assert.ok(
        lines.some((l) => NEWER_LINE.exec(l)?.[1] === '1' && l.includes(CONTRACT)),
        lines.join('\n'),
      )
    })
  })
})
