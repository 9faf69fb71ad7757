// Rotating the secret key of a fleet: the procedure of docs/security.md, step by step, against two live instances on one
// PostgreSQL while requests and jobs run, with drivers configured on the instances that the CLI does not have.
import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { randomBytes } from 'node:crypto'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { systemClock } from '../src/clock.js'
import type { DB } from '../src/db/tables.js'
import { keyId, parseSecretKey, SecretBox } from '../src/lib/secret-box.js'
import { SEALED_COLUMNS } from '../src/modules/secrets/sealed-columns.js'
import { SecretsService } from '../src/modules/secrets/secrets.service.js'
import type { Config } from '../src/config/config.js'
import {
  describeWithEnv,
  freshDatabase,
  rawRows,
  startTestApp,
  tempDir,
  type TestAccount,
  type TestApp,
} from './helpers/app.js'
import { freePort, insertZone } from './helpers/dns.js'
import { describeWithPebble, startPebble, type Pebble } from './helpers/pebble.js'
import { describeWithPowerDns, startPowerDns, type PowerDns } from './helpers/powerdns.js'
import { runAdminCli } from './helpers/process.js'
import { eventually } from './helpers/wait.js'

const OLD = randomBytes(32).toString('base64')
const NEW = randomBytes(32).toString('base64')
const idOf = (k: string) => keyId(parseSecretKey(k)!)

const NAME = 'rotating the secret key of two running instances (the documented procedure)'
describeWithPowerDns(NAME, () =>
  describeWithPebble(NAME, () =>
    describeWithEnv(['HOSTAPI_TEST_PG_URL'], NAME, () => {
      let pdns: PowerDns
      let pebble: Pebble
      let database: Config['database']
      let drop: () => Promise<void>
      const cliDir = tempDir()
      const apps: [TestApp | null, TestApp | null] = [null, null]
      let owner: TestAccount
      const zones: string[] = []
      const webhooks: number[] = []
      /** Every answer other than 200, and every start that failed, as `what: detail`. */
      const problems: string[] = []
      let drivers: Record<string, string>

      const keys = (k: Record<string, string>) => ({ ...drivers, ...k })

      /** Restarts instance `i` with `env` (the documented "restart it"), while the other keeps serving. */
      async function restart(i: 0 | 1, env: Record<string, string>): Promise<void> {
        await apps[i]?.close()
        apps[i] = null
        try {
          apps[i] = await startTestApp('postgres', { database, env })
        } catch (err) {
          problems.push(`start of instance ${i + 1}: ${(err as Error).message}`)
          throw err
        }
      }

      const live = () => apps.filter((a): a is TestApp => a !== null)

      /** Requests that open or seal secrets, through every live instance: new zone keys, zone changes, webhook secrets. */
      async function traffic(through: TestApp[]): Promise<void> {
        for (const app of through) {
          const call = async (method: string, path: string, body?: unknown) => {
            const r = await app.request(method, path, { key: owner.key, body })
            if (r.status !== 200) problems.push(`${method} ${path} on ${app.origin}: ${r.status} ${r.text}`)
            return r
          }
          // A zone key sealed by this instance, and a push of every zone (whoever sealed its key) by either runner.
          const zone = `rotation-${zones.length}.nl`
          await insertZone(app.ctx.db, owner.accountId, zone, {
            nameservers: [
              { hostname: 'ns1.hostapi.test', ipv4: '', ipv6: '' },
              { hostname: 'ns2.hostapi.test', ipv4: '', ipv6: '' },
            ],
          })
          zones.push(zone)
          await call('PUT', `/domains/${zone}`, { dnssec: { enabled: true } })
          // The newest zones (the older ones are pushed again by the resync every start queues).
          for (const z of zones.slice(-6))
            await call('PATCH', `/domains/${z}/dns`, {
              record: { type: 'TXT', name: 'rot', value: randomBytes(4).toString('hex'), ttl: 300 },
            })
          // A webhook secret sealed here; rotating each one opens the secret another instance may have sealed.
          const created = await call('POST', '/account/webhooks', {
            url: 'http://127.0.0.1:9/hook',
            events: ['vps.task.failed'],
          })
          if (created.status === 200) webhooks.push(created.body.data.id)
          // An account has at most 20 endpoints: the oldest goes.
          if (webhooks.length > 6) await call('DELETE', `/account/webhooks/${webhooks.shift()}`)
          for (const id of webhooks) await call('POST', `/account/webhooks/${id}/rotate-secret`)
        }
      }

      /** The ACME account key opens on every live instance (a new order at pebble through the instance's CA). */
      async function acmeOpens(): Promise<void> {
        for (const app of live()) {
          try {
            const r = await app.ctx.drivers.ca.validate({
              accountId: owner.accountId,
              names: ['rotation.example'],
              challenge: { method: 'dns', dnsRecords: [], httpFiles: [], approverEmail: null },
            })
            assert.equal(r.valid, false)
          } catch (err) {
            problems.push(`ACME on ${app.origin}: ${(err as Error).message}`)
          }
        }
      }

      /** Waits until no zone push is queued or running, then lists the jobs that failed an attempt. */
      async function failedJobs(): Promise<string[]> {
        const queued = async () =>
          Number(
            (
              await rawRows(
                database,
                "select count(*) as n from jobs where kind like 'dns.%' and status in ('queued', 'running')",
              )
            )[0].n,
          )
        await eventually(async () => (await queued()) === 0, { what: 'no zone push left', intervalMs: 100 }).catch(
          () => undefined,
        )
        const rows = await rawRows(
          database,
          "select kind, status, attempts, last_error from jobs where last_error is not null or status = 'failed'",
        )
        return rows.map((r) => `${r.kind} ${r.status} (${r.attempts} attempts): ${r.last_error}`)
      }

      /** One step of the procedure: each instance in turn restarted with `env` while the other serves, then traffic. */
      async function step(env: Record<string, string>): Promise<void> {
        for (const i of [0, 1] as const) {
          const other = apps[1 - i]
          await Promise.all([restart(i, env), other ? traffic([other]) : Promise.resolve()])
          await traffic(live())
          await acmeOpens()
        }
        assert.deepEqual(await failedJobs(), [])
        assert.deepEqual(problems, [])
      }

      before(async () => {
        pdns = await startPowerDns()
        pebble = await startPebble({ dnsPort: await freePort(), httpPort: await freePort() })
        ;({ database, drop } = await freshDatabase('postgres', cliDir))
        drivers = {
          HOSTAPI_JOBS: '1',
          HOSTAPI_JOB_POLL_MS: '50',
          HOSTAPI_DNS_DRIVER: 'powerdns',
          HOSTAPI_POWERDNS_URL: pdns.url,
          HOSTAPI_POWERDNS_API_KEY: pdns.apiKey,
          HOSTAPI_CA_DRIVER: 'acme',
          HOSTAPI_ACME_DIRECTORY: pebble.directoryUrl,
          HOSTAPI_ACME_CA_BUNDLE: pebble.caBundle,
          HOSTAPI_WEBHOOKS_ALLOW_HTTP: '1',
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
        }
        apps[0] = await startTestApp('postgres', { database, env: keys({ HOSTAPI_SECRET_KEY: OLD }) })
        apps[1] = await startTestApp('postgres', { database, env: keys({ HOSTAPI_SECRET_KEY: OLD }) })
        owner = await apps[0].account('Rotation B.V.')
        await traffic(live())
        await acmeOpens()
        assert.deepEqual(problems, [])
      })
      after(async () => {
        for (const app of apps) await app?.close().catch(() => undefined)
        await drop?.()
        fs.rmSync(cliDir, { recursive: true, force: true })
        await pebble?.close()
        await pdns?.close()
      })

      it('no request, job or start fails at any step, and at the end every sealed value opens with the new key alone', async () => {
        // 1. On every instance in turn: the new key as HOSTAPI_SECRET_KEY_NEXT.
        await step(keys({ HOSTAPI_SECRET_KEY: OLD, HOSTAPI_SECRET_KEY_NEXT: NEW }))
        // 2. On every instance in turn: the new key as HOSTAPI_SECRET_KEY, the old one as HOSTAPI_SECRET_KEY_PREVIOUS.
        await step(keys({ HOSTAPI_SECRET_KEY: NEW, HOSTAPI_SECRET_KEY_PREVIOUS: OLD }))
        // 3. Once, from a CLI configured with neither the ACME CA nor PowerDNS: re-seal everything.
        const cli = await runAdminCli(
          {
            PATH: process.env.PATH ?? '',
            HOSTAPI_DATA_DIR: cliDir,
            HOSTAPI_LOG_LEVEL: 'silent',
            DATABASE_URL: database.dialect === 'postgres' ? database.url : '',
            HOSTAPI_DB_SCHEMA: database.dialect === 'postgres' ? (database.schema ?? '') : '',
            HOSTAPI_SECRET_KEY: NEW,
            HOSTAPI_SECRET_KEY_PREVIOUS: OLD,
          },
          'secrets',
          'rotate',
        )
        assert.match(cli.err, new RegExp(`re-sealed [1-9][0-9]* stored value\\(s\\) with the secret key ${idOf(NEW)}`))
        await traffic(live())
        // 4. On every instance in turn: HOSTAPI_SECRET_KEY_PREVIOUS removed.
        await step(keys({ HOSTAPI_SECRET_KEY: NEW }))

        // Every value in the database that looks sealed, in any column of any table, is in a registered column and
        // sealed with the new key; and the new key alone opens all of them.
        if (database.dialect !== 'postgres') throw new Error('PostgreSQL only')
        const columns = await rawRows(
          database,
          `select table_name, column_name from information_schema.columns
       where table_schema = '${database.schema}' and data_type in ('text', 'character varying')`,
        )
        const registered = new Set(['secret_key_checks.value', ...SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`)])
        const found = new Map<string, Set<string>>()
        for (const { table_name, column_name } of columns) {
          const rows = await rawRows(
            database,
            `select "${column_name}" as v from "${table_name}" where "${column_name}" ~ '^v1:[0-9a-f]{16}:'`,
          )
          for (const { v } of rows) {
            const where = `${table_name}.${column_name}`
            if (!found.has(where)) found.set(where, new Set())
            found.get(where)!.add(String(v).split(':')[1])
          }
        }
        for (const where of found.keys()) assert.ok(registered.has(where), `${where} holds sealed values: register it`)
        for (const c of ['acme_accounts.account_key', 'dnssec_zone_keys.private_key', 'webhook_endpoints.secret'])
          assert.ok(found.has(c), `the scenario stores ${c}`)
        for (const [where, ids] of found) assert.deepEqual([...ids], [idOf(NEW)], where)

        const db = new Kysely<DB>({
          dialect: new PostgresDialect({
            pool: new pg.Pool({ connectionString: database.url, options: `-c search_path=${database.schema}` }),
          }),
        })
        try {
          assert.equal(
            await new SecretsService({ db, clock: systemClock, box: new SecretBox(parseSecretKey(NEW)!) }).verify(),
            0,
          )
        } finally {
          await db.destroy()
        }
      })
    }),
  ),
)
