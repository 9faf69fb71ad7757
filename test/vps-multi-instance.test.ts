import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, type TestAccount, type TestApp } from './helpers/app.js'
import { twoInstances } from './helpers/instances.js'
import { TASK_JOB } from '../src/modules/vps/vps-tasks.service.js'
import { eventually } from './helpers/wait.js'

// Two instances with their job runners on, on one PostgreSQL database: a power action queued through one runs exactly once.
describeWithEnv(['HOSTAPI_TEST_PG_URL'], 'VPS tasks on two instances sharing PostgreSQL', () => {
  let one: TestApp
  let two: TestApp
  let a: TestAccount
  let close: () => Promise<void>
  before(async () => {
    ;({ one, two, close } = await twoInstances({
      env: { HOSTAPI_JOBS: '1', HOSTAPI_JOB_POLL_MS: '10', HOSTAPI_JOB_CONCURRENCY: '4', HOSTAPI_SIM_SPEED: '1000' },
    }))
    a = await one.account()
  })
  after(() => close())

  const waitFor = <T>(fn: () => Promise<T | undefined>, what: string): Promise<T> =>
    eventually(async () => (await fn()) ?? false, { what, intervalMs: 25 }) as Promise<T>
  const statusOf = async (app: TestApp, id: number) =>
    (await app.request('GET', `/vps/${id}`, { key: a.key })).body.data

  it('runs each queued power action once, whichever instance claims it', async () => {
    const ids: number[] = []
    for (let i = 0; i < 8; i++) {
      const input = { productId: 'vps-s', imageId: 'debian-12', hostname: `multi${i}.example.com`, location: 'ams' }
      ids.push((await one.ctx.services.vps.ordering.provision(a.accountId, input)).vpsId)
    }
    for (const id of ids)
      await waitFor(async () => ((await statusOf(two, id)).status === 'running' ? true : undefined), `VPS ${id} to run`)

    const tasks: number[] = []
    for (const [i, id] of ids.entries()) {
      const r = await (i % 2 ? two : one).request('POST', `/vps/${id}/stop`, { key: a.key })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      tasks.push(r.body.data.task.id)
    }
    for (const id of ids)
      await waitFor(
        async () => ((await statusOf(one, id)).status === 'stopped' ? true : undefined),
        `VPS ${id} to stop`,
      )

    const db = one.ctx.db
    const rows = await db.selectFrom('vps_tasks').selectAll().where('id', 'in', tasks).execute()
    assert.equal(rows.length, ids.length)
    for (const task of rows) {
      assert.equal(task.status, 'done')
      assert.equal(task.attempts, 1, `task ${task.id} began ${task.attempts} times`)
      const job = await db.selectFrom('jobs').selectAll().where('id', '=', task.job_id!).executeTakeFirstOrThrow()
      assert.equal(job.kind, TASK_JOB)
      assert.equal(job.status, 'done')
      assert.equal(job.attempts, 1)
      // One state change on the hypervisor: exactly one shutdown operation, ended once.
      const vps = await db
        .selectFrom('vps')
        .select(['instance_ref', 'status', 'task_id'])
        .where('id', '=', task.vps_id)
        .executeTakeFirstOrThrow()
      assert.deepEqual([vps.status, vps.task_id], ['stopped', null])
      const ops = await db
        .selectFrom('hv_operations')
        .selectAll()
        .where('instance_id', '=', Number(vps.instance_ref))
        .where('action', '=', 'shutdown')
        .execute()
      assert.equal(ops.length, 1)
      assert.equal(ops[0].status, 'done')
    }
  })
})
