import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import type { BuiltinHypervisor } from '../src/drivers/hypervisor/builtin.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeVps } from './helpers/fixtures/vps.js'

type State = 'running' | 'stopped' | 'rescue' | 'error' | 'terminated' | 'locked'
type Action =
  | 'start'
  | 'stop'
  | 'poweroff'
  | 'restart'
  | 'rescue_on'
  | 'rescue_off'
  | 'reinstall'
  | 'reset_password'
  | 'hostname'
  | 'backup'
  | 'restore'

const LOCKED = 'VPS is locked by a running task'
const TERMINATED = 'This VPS has been cancelled and removed'
const ERROR = 'The VPS is in an error state: reinstall it'

/**
 * The whole table: for each settled state and action, either `[transitional status, final status]` (accepted;
 * null transitional = an immediate action without a task) or the refusal text.
 */
const TABLE: Record<Action, Record<State, [string | null, string] | string>> = {
  start: {
    running: 'VPS is already running',
    stopped: ['starting', 'running'],
    rescue: 'VPS is already running',
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  stop: {
    running: ['stopping', 'stopped'],
    stopped: 'VPS is already stopped',
    rescue: ['stopping', 'stopped'],
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  poweroff: {
    running: ['stopping', 'stopped'],
    stopped: 'VPS is already stopped',
    rescue: ['stopping', 'stopped'],
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  restart: {
    running: ['restarting', 'running'],
    stopped: 'VPS is stopped: start it instead',
    rescue: ['restarting', 'rescue'],
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  rescue_on: {
    running: ['restarting', 'rescue'],
    stopped: ['restarting', 'rescue'],
    rescue: 'Rescue mode is already enabled',
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  rescue_off: {
    running: 'Rescue mode is not enabled',
    stopped: 'Rescue mode is not enabled',
    rescue: ['restarting', 'running'],
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  reinstall: {
    running: ['installing', 'running'],
    stopped: ['installing', 'running'],
    rescue: ['installing', 'running'],
    error: ['installing', 'running'],
    terminated: TERMINATED,
    locked: LOCKED,
  },
  reset_password: {
    running: [null, 'running'],
    stopped: 'The VPS must be running to reset the root password',
    rescue: 'The root password cannot be reset in rescue mode',
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  hostname: {
    running: [null, 'running'],
    stopped: [null, 'stopped'],
    rescue: [null, 'rescue'],
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  backup: {
    running: ['running', 'running'],
    stopped: ['stopped', 'stopped'],
    rescue: ['rescue', 'rescue'],
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
  restore: {
    running: ['restoring', 'running'],
    stopped: ['restoring', 'running'],
    rescue: ['restoring', 'running'],
    error: ERROR,
    terminated: TERMINATED,
    locked: LOCKED,
  },
}
const STATES: State[] = ['running', 'stopped', 'rescue', 'error', 'terminated', 'locked']

forEachDialect((dialect) => {
  describe(`VPS state machine: every action in every state (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    const clock = new ManualClock()
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_SIM_SPEED: '1000000' }, clock })
      a = await t.account()
    })
    after(() => t.close())

    const get = async (id: number) => (await t.request('GET', `/vps/${id}`, { key: a.key })).body.data
    const ok200 = async (p: Promise<{ status: number; body: { status_description: string } }>) => {
      const r = await p
      assert.equal(r.status, 200, r.body.status_description)
    }

    const act = (id: number, action: Action, backupKey: number) => {
      const req = (m: string, p: string, body?: unknown) => t.request(m, `/vps/${id}${p}`, { key: a.key, body })
      switch (action) {
        case 'start':
        case 'stop':
        case 'poweroff':
        case 'restart':
          return req('POST', `/${action}`)
        case 'rescue_on':
          return req('PUT', '/rescue', { enable: true })
        case 'rescue_off':
          return req('PUT', '/rescue', { enable: false })
        case 'reinstall':
          return req('POST', '/reinstall', { image_id: 'ubuntu-24.04' })
        case 'reset_password':
          return req('POST', '/reset-password')
        case 'hostname':
          return req('PUT', '/hostname', { hostname: 'renamed.example.com' })
        case 'backup':
          return req('POST', '/backups')
        case 'restore':
          return req('PATCH', '/backups', { key: backupKey })
      }
    }

    /** A VPS brought into `state` through the API (and the simulator's fault injection for `error`). */
    const inState = async (state: State): Promise<{ id: number; backupKey: number }> => {
      const id = await makeVps(t, a, { settle: true })
      await ok200(t.request('POST', `/vps/${id}/backups`, { key: a.key }))
      await t.ctx.jobs.drain()
      const backups = (await t.request('GET', `/vps/${id}/backups`, { key: a.key })).body.details.backups
      const backupKey = backups[0].key as number
      if (state === 'stopped') await ok200(t.request('POST', `/vps/${id}/stop`, { key: a.key }))
      if (state === 'rescue') await ok200(t.request('PUT', `/vps/${id}/rescue`, { key: a.key, body: { enable: true } }))
      if (state === 'locked') await ok200(t.request('POST', `/vps/${id}/backups`, { key: a.key }))
      if (state === 'error') {
        const hv = t.ctx.drivers.hypervisor as BuiltinHypervisor
        const row = await t.ctx.db
          .selectFrom('vps')
          .select('instance_ref')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
        await hv.simulate(row.instance_ref, { failNext: 'Disk image corrupt' })
        await ok200(t.request('POST', `/vps/${id}/reinstall`, { key: a.key, body: { image_id: 'debian-12' } }))
      }
      if (state === 'terminated') {
        await ok200(t.request('DELETE', `/vps/${id}`, { key: a.key }))
        clock.advance(32 * 86_400_000)
      }
      if (state !== 'locked') await t.ctx.jobs.drain()
      const v = await get(id)
      assert.equal(v.status, state === 'locked' ? 'running' : state)
      assert.equal(v.vps_locked, state === 'locked')
      return { id, backupKey }
    }

    for (const action of Object.keys(TABLE) as Action[]) {
      for (const state of STATES) {
        const expected = TABLE[action][state]
        const label = typeof expected === 'string' ? `refused: ${expected}` : `accepted → ${expected[1]}`
        it(`${action} in ${state}: ${label}`, async () => {
          const { id, backupKey } = await inState(state)
          const r = await act(id, action, backupKey)
          if (typeof expected === 'string') {
            assert.deepEqual(r.body, { status: 400, status_description: expected })
            assert.equal(r.status, 400)
            const v = await get(id)
            assert.equal(v.status, state === 'locked' ? 'running' : state, 'a refused action changes nothing')
            return
          }
          assert.equal(r.status, 200, JSON.stringify(r.body))
          const [transitional, final] = expected
          const during = await get(id)
          if (transitional === null) {
            assert.equal(during.vps_locked, false)
            assert.deepEqual(during.tasks, [])
          } else {
            assert.equal(r.body.data.task.status, 'queued')
            assert.equal(during.status, transitional)
            assert.equal(during.vps_locked, true)
            assert.deepEqual(
              during.tasks.map((x: { id: number }) => x.id),
              [r.body.data.task.id],
            )
            // While it is held, any other action is refused.
            const again = await act(id, 'reinstall', backupKey)
            assert.deepEqual(again.body, { status: 400, status_description: LOCKED })
          }
          await t.ctx.jobs.drain()
          const settled = await get(id)
          assert.equal(settled.status, final)
          assert.equal(settled.vps_locked, false)
          assert.equal(settled.rescue, final === 'rescue')
          if (transitional !== null) {
            const task = await t.ctx.db
              .selectFrom('vps_tasks')
              .selectAll()
              .where('id', '=', r.body.data.task.id)
              .executeTakeFirstOrThrow()
            assert.equal(task.status, 'done')
            assert.equal(task.progress, 100)
            assert.equal(task.attempts, 1)
          }
        })
      }
    }
  })
})
