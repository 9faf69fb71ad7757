import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { openDatabase } from '../src/db/database.js'
import { CRASH_POINTS } from '../src/ops/crash-points.js'
import { forEachDialect, processDatabase, request } from './helpers/app.js'
import { crashableServerEnv, originOf, spawnServer, type ServerProcess } from './helpers/process.js'
import { eventually } from './helpers/wait.js'

const KEY = 'orderCrashDemoKey0000000001'
const ADMIN = 'adm_orderCrashAdminToken0001'
const LOCK_MS = 1000

// The incident: a process killed between an order's rows and the work they cause left the order open, its item
// pending, with no job and no invoice, and the client's retry answered 409 and then "already in an open order" for
// ever. Killed at every step of the placing, the order is placed whole (and processed after the restart) or not at
// all (and the retry with the same Idempotency-Key, once the dead request's claim is old, places it).
forEachDialect((dialect) => {
  describe(`an order placed by a process killed on the way (${dialect})`, () => {
    for (const point of CRASH_POINTS.filter((p) => p.startsWith('orders.create.'))) {
      it(`is processed after a restart, or placed by the retry: killed at ${point}`, async () => {
        const place = await processDatabase(dialect)
        const env = { ...crashableServerEnv(place, KEY, ADMIN), HOSTAPI_IDEMPOTENCY_LOCK_MS: String(LOCK_MS) }
        const domain = `crash-${point.split('.').pop()}-${Date.now()}.com`
        const order = (origin: string) =>
          request(origin, 'POST', '/api/v2/domains/order', {
            key: KEY,
            body: { domain },
            headers: { 'idempotency-key': `order-${domain}` },
          })
        const first = spawnServer({ ...env, HOSTAPI_CRASH_AT: point })
        let second: ServerProcess | null = null
        const db = openDatabase(place.database)
        try {
          await assert.rejects(order(await originOf(first)), 'the request dies with its process')
          assert.equal((await first.exited).signal, 'SIGKILL')

          second = spawnServer(env)
          const origin = await originOf(second)
          // Once the dead request's claim of the key is older than the lock age, the retry is a new request.
          const retry = await eventually(
            async () => {
              const r = await order(origin)
              assert.notEqual(r.status, 409, `retry answered ${r.text}`)
              return r
            },
            { what: 'a retry is taken as a new request', timeoutMs: LOCK_MS + 30_000, intervalMs: 250 },
          )
          assert.ok(
            // Processed after the restart before the retry came: the name is then the account's, so not available.
            retry.status === 200 || /already in an open order|not available for registration/.test(retry.text),
            `retry answered ${retry.text}`,
          )
          // An invoice left unissued by the crash is issued by its job, due a few minutes later.
          const clock = await request(origin, 'POST', '/admin/v1/sandbox/clock', {
            headers: { authorization: `Bearer ${ADMIN}` },
            body: { advance: '10m' },
          })
          assert.equal(clock.status, 200, clock.text)
          await eventually(
            async () => {
              const items = await db.db
                .selectFrom('order_items')
                .select('order_id')
                .where('name', '=', domain)
                .execute()
              if (items.length !== 1) return false
              const o = await db.db
                .selectFrom('orders')
                .select('status')
                .where('id', '=', items[0].order_id)
                .executeTakeFirstOrThrow()
              const invoices = await db.db
                .selectFrom('invoices')
                .select(['payment_reference', 'status'])
                .where('order_id', '=', items[0].order_id)
                .execute()
              return o.status === 'completed' && invoices.length === 1 && invoices[0].payment_reference !== null
            },
            { what: 'the order is completed and its invoice issued' },
          )
          const items = await db.db.selectFrom('order_items').selectAll().where('name', '=', domain).execute()
          assert.equal(items.length, 1, 'one order for the domain')
          assert.equal(items[0].status, 'done')
          const got = await request(origin, 'GET', `/api/v2/domains/${domain}`, { key: KEY })
          assert.equal(got.status, 200, got.text)
          // The job records its end just after its work, and one the killed process held waits for its lease: both are
          // allowed a moment.
          const leftWork = () =>
            db.db
              .selectFrom('jobs')
              .select(['kind', 'status'])
              .where('status', 'in', ['queued', 'running'])
              .where('kind', 'in', ['orders.process', 'invoices.issue'])
              .execute()
          await eventually(async () => assert.deepEqual(await leftWork(), [], 'no work of the order is left'), {
            what: 'the work of the order is done',
            timeoutMs: 15_000,
          })
        } finally {
          first.child.kill('SIGKILL')
          second?.child.kill('SIGTERM')
          await second?.exited
          await db.close()
          await place.remove()
        }
      })
    }

    // The registry registered the name, then the process died before the domain was recorded: the job taken up again
    // asks the registry once more with the same request, and gets the registration it made (not "not available").
    it('completes after a restart when killed between the registry and the domain', async () => {
      const place = await processDatabase(dialect)
      const env = crashableServerEnv(place, KEY)
      const domain = `crash-registered-${Date.now()}.com`
      const first = spawnServer({ ...env, HOSTAPI_SANDBOX: '1', HOSTAPI_CRASH_AT: 'domains.order.registered' })
      let second: ServerProcess | null = null
      const db = openDatabase(place.database)
      try {
        // The job may reach the crash point before the answer is out: the request may die with its process.
        const placed = await request(await originOf(first), 'POST', '/api/v2/domains/order', {
          key: KEY,
          body: { domain },
        }).catch(() => null)
        if (placed) assert.equal(placed.status, 200, placed.text)
        assert.equal((await first.exited).signal, 'SIGKILL', 'the order job died after the registry call')
        const registered = await db.db
          .selectFrom('registry_domains')
          .select('name')
          .where('name', '=', domain)
          .execute()
        assert.equal(registered.length, 1, 'the registry holds the name')
        second = spawnServer(env)
        const origin = await originOf(second)
        await eventually(
          async () => {
            const o = await db.db
              .selectFrom('orders')
              .select('status')
              .where('id', 'in', db.db.selectFrom('order_items').select('order_id').where('name', '=', domain))
              .executeTakeFirst()
            return o !== undefined && o.status !== 'open' && o.status !== 'processing'
          },
          { what: 'the order is completed' },
        )
        const items = await db.db.selectFrom('order_items').selectAll().where('name', '=', domain).execute()
        assert.equal(items[0]?.status, 'done', JSON.stringify(items[0]))
        const got = await request(origin, 'GET', `/api/v2/domains/${domain}`, { key: KEY })
        assert.equal(got.status, 200, got.text)
      } finally {
        first.child.kill('SIGKILL')
        second?.child.kill('SIGTERM')
        await second?.exited
        await db.close()
        await place.remove()
      }
    })
  })
})
