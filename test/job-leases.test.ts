import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Type } from 'typebox'
import { iso, ManualClock, type Clock } from '../src/clock.js'
import { ConfigError, loadConfig } from '../src/config/config.js'
import { defineJob, JobRunner, type JobDefinition } from '../src/jobs/runner.js'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { eventually, pace } from './helpers/wait.js'

const LEASE_MS = 1000

describe('job lease and crash fault configuration', () => {
  it('reads the lease (60 s by default) and honours the crash fault in sandbox mode only', () => {
    assert.equal(loadConfig({}).jobs.leaseMs, 60_000)
    assert.equal(loadConfig({ HOSTAPI_JOB_LEASE_MS: '1500' }).jobs.leaseMs, 1500)
    assert.throws(() => loadConfig({ HOSTAPI_JOB_LEASE_MS: '10' }), /HOSTAPI_JOB_LEASE_MS/)
    assert.equal(loadConfig({}).sandbox.crashJob, null)
    assert.equal(loadConfig({ HOSTAPI_SANDBOX_CRASH_JOB: 'maintenance.prune' }).sandbox.crashJob, 'maintenance.prune')
    assert.throws(
      () => loadConfig({ HOSTAPI_SANDBOX: '0', HOSTAPI_SANDBOX_CRASH_JOB: 'maintenance.prune' }),
      (e: unknown) => e instanceof ConfigError && /HOSTAPI_SANDBOX_CRASH_JOB .*sandbox mode only/.test(e.message),
    )
  })
})

// The runner's leases, as two instances on one database see them: runners of this process with a short lease.
forEachDialect((dialect) => {
  describe(`job leases (${dialect})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(dialect)
    })
    after(() => t.close())

    const runner = (...kinds: JobDefinition[]) => runnerOn(t.ctx.clock, ...kinds)
    const runnerOn = (clock: Clock, ...kinds: JobDefinition[]) => {
      const r = new JobRunner(t.ctx.db, t.ctx.dialect, clock, t.ctx.log, {
        pollMs: 20,
        concurrency: 4,
        leaseMs: LEASE_MS,
      })
      for (const kind of kinds) r.register(kind)
      return r
    }
    const job = async (id: number) => (await t.ctx.jobs.get(id))!

    /**
     * One job that runs for `ms`, drained by one instance while a second instance (started once the job runs, after
     * `meanwhile`) polls the same table: it must run once, to done, and never be taken for abandoned.
     */
    const runsOnceBesideAnother = async (name: string, ms: number, clock: Clock, meanwhile = () => {}) => {
      let runs = 0
      const slow = defineJob({
        name,
        payload: Type.Null(),
        handle: async () => {
          runs++
          await pace(ms)
          return 'done'
        },
      })
      const a = runnerOn(clock, slow)
      const b = runnerOn(clock, slow)
      const id = await a.enqueue(slow, null, { trx: t.ctx.db })
      const draining = a.drain([slow.name])
      await eventually(async () => (await job(id)).status === 'running', { what: 'the job runs', timeoutMs: 20_000 })
      meanwhile()
      b.start()
      try {
        await draining
      } finally {
        await b.stop()
      }
      const done = await job(id)
      assert.deepEqual([done.status, done.attempts, done.crashes, runs], ['done', 1, 0, 1])
    }

    it('renews the lease of a job while it runs, so another instance does not take it for abandoned', async () => {
      await runsOnceBesideAnother('test.slow', LEASE_MS * 3.5, t.ctx.clock)
    })

    it('keeps leases on the wall clock: moving a sandbox clock on abandons no running job', async () => {
      const clock = new ManualClock()
      await runsOnceBesideAnother('test.slow-sandbox', LEASE_MS / 2, clock, () => clock.advance(86_400_000))
    })

    it('runs a job whose process died alone, and quarantines one whose process died twice', async () => {
      const ran: { name: string; from: number; to: number }[] = []
      const kind = (name: string) =>
        defineJob({
          name,
          payload: Type.Null(),
          handle: async () => {
            const from = performance.now()
            await pace(300)
            ran.push({ name, from, to: performance.now() })
          },
        })
      const normal = kind('test.normal')
      const abandoned = kind('test.abandoned')
      const doomed = kind('test.doomed')
      const r = runner(normal, abandoned, doomed)
      const ids = {
        n1: await r.enqueue(normal, null, { trx: t.ctx.db }),
        n2: await r.enqueue(normal, null, { trx: t.ctx.db }),
        abandoned: await r.enqueue(abandoned, null, { trx: t.ctx.db }),
        n3: await r.enqueue(normal, null, { trx: t.ctx.db }),
        doomed: await r.enqueue(doomed, null, { trx: t.ctx.db }),
      }
      // What a process killed during an attempt leaves: the job running, its lease run out; `doomed` was left so
      // once before already.
      const past = iso(new Date(Date.now() - 1))
      for (const [id, crashes] of [
        [ids.abandoned, 0],
        [ids.doomed, 1],
      ])
        await t.ctx.db
          .updateTable('jobs')
          .set({ status: 'running', attempts: 1, crashes, locked_by: 'dead-worker', locked_until: past })
          .where('id', '=', id)
          .execute()
      r.start()
      try {
        await eventually(
          async () => (await Promise.all(Object.values(ids).map(job))).every((j) => j.status !== 'queued'),
          { what: 'every job is taken', timeoutMs: 20_000 },
        )
        await eventually(
          async () => (await Promise.all(Object.values(ids).map(job))).every((j) => j.status !== 'running'),
          { what: 'every job has ended', timeoutMs: 20_000 },
        )
      } finally {
        await r.stop()
      }
      const taken = await job(ids.abandoned)
      assert.deepEqual([taken.status, taken.attempts, taken.crashes], ['done', 2, 1])
      const alone = ran.find((x) => x.name === abandoned.name)!
      const beside = ran.filter((x) => x !== alone && x.from < alone.to && alone.from < x.to)
      assert.deepEqual(beside, [], 'the job whose process died ran alone')
      assert.equal(ran.filter((x) => x.name === normal.name).length, 3)

      const quarantined = await job(ids.doomed)
      assert.deepEqual([quarantined.status, quarantined.crashes], ['failed', 2])
      assert.match(quarantined.last_error ?? '', /^quarantined: its process died during 2 attempts/)
      assert.ok(!ran.some((x) => x.name === doomed.name), 'a quarantined job is not run')
    })
  })
})
