import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso, ymdhm } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import type { Db } from '../../db/database.js'
import { errors } from '../../errors.js'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import { crashPoint } from '../../ops/crash-points.js'
import type { WorkFaults } from '../../ops/faults.js'
import { HypervisorError, type HypervisorDriver, type Operation } from '../../drivers/hypervisor/hypervisor.js'
import * as repo from './vps.repository.js'
import type { Vps, VpsTask } from './vps.repository.js'
import { ownedVps } from './vps.common.js'
import { emitEvent } from '../webhooks/webhook-events.js'
import { statusEvent, taskEvent } from './vps-events.js'
import type { DryRun } from '../../lib/dry-run.js'
import { present } from '../../lib/invariant.js'
import { TRANSITIONAL, refusal, type TaskAction, type VpsAction } from './vps.state.js'

/** The job that runs one VPS task. */
export const TASK_JOB = 'vps.task'

/** A power action a customer can ask for. */
export type PowerAction = 'start' | 'stop' | 'poweroff' | 'restart'

import { taskView, type TaskView } from './vps-task-view.js'
export { taskView, type TaskView } from './vps-task-view.js'

/** How tasks are run; see the configuration. */
export interface VpsTaskOptions {
  shutdownTimeoutSeconds: number
  /** Sandbox fault injection into tasks (`vps.task`); none in production. */
  faults?: WorkFaults | null
}

/** The error of a task the sandbox's fault injection fails, when the fault sets no text. */
export const TASK_FAULT = 'The hypervisor reported an error'

/**
 * VPS tasks: the state rules an action must pass, queueing a task that holds the VPS, running it through the
 * hypervisor to its end (or abandoning it), and the power actions, which are nothing but tasks.
 */
const TASK_ATTEMPTS = 16

/** What VpsTasks is built on. */
export interface VpsTasksDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  hypervisor: HypervisorDriver
  opts: VpsTaskOptions
}

export class VpsTasks {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly hypervisor: HypervisorDriver
  private readonly opts: VpsTaskOptions

  constructor(deps: VpsTasksDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.hypervisor = deps.hypervisor
    this.opts = deps.opts
  }

  // The hypervisor may be unreachable for a while (restart, upgrade): 16 attempts back off from 1 s to 5 min, about
  // 40 minutes in all, before the task ends failed with the last error.
  /** The job that runs one power, disk or provisioning task. */
  readonly taskJob = defineJob({
    name: TASK_JOB,
    payload: Type.Object({ taskId: Type.Integer() }),
    handle: async ({ taskId }, { job, attempt }) => {
      try {
        return await this.run(taskId)
      } catch (err) {
        // The last attempt failed on something unexpected (database, hypervisor API): end the task so the VPS is
        // not held forever.
        if (attempt >= job.max_attempts) await this.abandon(taskId, err instanceof Error ? err.message : String(err))
        throw err
      }
    },
  })

  private now() {
    return this.clock.now()
  }

  /** Queues a power action: start, stop (graceful), poweroff (hard) or restart. */
  async power(accountId: number, rawId: string, action: PowerAction, opts: DryRun = {}): Promise<TaskView> {
    const v = await ownedVps(this.db, accountId, rawId)
    return this.queue(v, action, {}, opts)
  }

  /** Refuses an action the VPS cannot take now: locked by a task, or not fitting its state. */
  assertActionable(v: Vps, action: VpsAction): void {
    if (v.task_id !== null) throw errors.vpsLocked()
    const text = refusal(v.status, action)
    if (text) throw errors.vpsWrongState(text)
  }

  /** Records a task, gives it the VPS (or refuses: locked / wrong state) and queues its job. */
  async queue(
    v: Vps,
    action: Exclude<TaskAction, 'create'>,
    params: Record<string, unknown>,
    opts: DryRun = {},
  ): Promise<TaskView> {
    this.assertActionable(v, action)
    if (opts.dryRun) return { id: 0, action, status: 'queued', progress: 0, created: ymdhm(this.now()), error: null }
    const now = iso(this.now())
    const task = await this.db.transaction().execute(async (trx) => {
      const t = await repo.insertTask(trx, {
        vps_id: v.id,
        account_id: v.account_id,
        action,
        status: 'queued',
        progress: 0,
        attempts: 0,
        params: JSON.stringify(params),
        previous_status: v.status,
        created_at: now,
        updated_at: now,
      })
      const held = await repo.holdVps(trx, v.account_id, v.id, t.id, TRANSITIONAL[action] ?? v.status, now)
      if (!held) throw errors.vpsLocked()
      await this.enqueue(trx, v.account_id, t.id)
      return t
    })
    crashPoint('vps.task.committed')
    this.jobs.poke()
    return taskView(present(await repo.findTask(this.db, task.id), `task ${task.id} just queued`))
  }

  /**
   * Queues the job that runs a recorded task and notes the job on the task, in the transaction that records the
   * task: a task is never left without its job.
   */
  async enqueue(trx: Db, accountId: number, taskId: number): Promise<void> {
    const jobId = await this.jobs.enqueue(
      this.taskJob,
      { taskId },
      { trx, accountId, maxAttempts: TASK_ATTEMPTS, key: `vps-task:${taskId}` },
    )
    await repo.updateTask(trx, taskId, { job_id: jobId })
  }

  /** Runs a task to its end: starts the hypervisor operation (or resumes it after a crash) and waits for it. */
  async run(taskId: number): Promise<{ status: string }> {
    const task = await repo.findTask(this.db, taskId)
    if (!task || task.status === 'done' || task.status === 'failed') return { status: task?.status ?? 'missing' }
    if (!(await repo.beginTask(this.db, taskId, iso(this.now())))) return { status: 'ended' }
    const vps = await repo.findVpsForJob(this.db, task.vps_id)
    if (!vps || vps.task_id !== task.id) return this.end(task, 'failed', 'The VPS is no longer held by this task')
    let operation: Operation
    if (task.operation_ref) operation = { ref: task.operation_ref }
    else {
      try {
        operation = await this.startOperation(vps, task)
      } catch (err) {
        if (err instanceof HypervisorError) return this.end(task, 'failed', err.message)
        throw err
      }
      await repo.updateTask(this.db, task.id, { operation_ref: operation.ref, updated_at: iso(this.now()) })
    }
    let last = -1
    const result = await this.hypervisor.wait(operation, async (percent) => {
      if (percent === last) return
      last = percent
      await repo.updateTask(this.db, task.id, { progress: percent, updated_at: iso(this.now()) })
    })
    return result.ok ? this.end(task, 'done', null) : this.end(task, 'failed', result.error)
  }

  /**
   * Starts the task's hypervisor operation. A sandbox fault for the task makes the operation fail as the
   * hypervisor's own failure would: a simulating driver runs it and fails it, any other refuses it now.
   */
  private async startOperation(vps: Vps, task: VpsTask): Promise<Operation> {
    const params = { vps: String(vps.id), action: task.action }
    const fault = await this.opts.faults?.('vps.task', task.account_id, params)
    if (fault) {
      const error = fault.status_description ?? TASK_FAULT
      if (!this.hypervisor.simulate) throw new HypervisorError(error)
      await this.hypervisor.simulate(vps.instance_ref, { failNext: error })
    }
    return this.operationOf(vps, task)
  }

  /** The hypervisor operation that carries out the task's action. */
  private operationOf(vps: Vps, task: VpsTask): Promise<Operation> {
    const p = task.params
    const ref = vps.instance_ref
    switch (task.action as TaskAction) {
      case 'start':
        return this.hypervisor.start(ref)
      case 'stop':
        return this.hypervisor.shutdown(ref, { timeoutSeconds: this.opts.shutdownTimeoutSeconds })
      case 'poweroff':
        return this.hypervisor.powerOff(ref)
      case 'restart':
        return this.hypervisor.reboot(ref)
      case 'rescue_on':
        return this.hypervisor.setRescue(ref, true, p.password as string)
      case 'rescue_off':
        return this.hypervisor.setRescue(ref, false, null)
      case 'reinstall':
        return this.hypervisor.reinstall(ref, p.imageId as string, {
          rootPassword: p.password as string,
          sshKeys: (p.sshKeys as string[]) ?? [],
        })
      case 'backup':
        return this.hypervisor.createBackup(ref)
      case 'restore':
        return this.hypervisor.restoreBackup(ref, Number(p.key))
      case 'create':
        throw new HypervisorError('The instance was not created')
    }
  }

  /**
   * Ends a task and frees the VPS. Success sets the state the action leads to; a failure reads the state
   * back from the hypervisor, and an install or restore that failed leaves the VPS in `error`.
   */
  private async end(task: VpsTask, outcome: 'done' | 'failed', error: string | null): Promise<{ status: string }> {
    const now = iso(this.now())
    const { password: _p, sshKeys: _k, ...kept } = task.params
    const vps = await repo.findVpsForJob(this.db, task.vps_id)
    let status = task.previous_status
    let image: string | undefined
    if (outcome === 'done') {
      const action = task.action as TaskAction
      if (
        action === 'start' ||
        action === 'rescue_off' ||
        action === 'reinstall' ||
        action === 'create' ||
        action === 'restore'
      )
        status = 'running'
      else if (action === 'stop' || action === 'poweroff') status = 'stopped'
      else if (action === 'rescue_on') status = 'rescue'
      if (action === 'reinstall') image = task.params.imageId as string
    } else if (['create', 'reinstall', 'restore'].includes(task.action)) {
      status = 'error'
    } else if (vps) {
      const state = await this.hypervisor.getInstance(vps.instance_ref).catch(() => null)
      if (state) status = state.rescue && state.power === 'running' ? 'rescue' : state.power
    }
    if (vps && outcome === 'done' && task.action === 'restore') {
      const state = await this.hypervisor.getInstance(vps.instance_ref).catch(() => null)
      if (state) image = state.imageId
    }
    await this.db.transaction().execute(async (trx) => {
      if (!(await repo.endTask(trx, task.id, { status: outcome, error, params: JSON.stringify(kept), now }))) return
      await repo.releaseVps(trx, task.vps_id, task.id, {
        status,
        rescue: status === 'rescue' ? 1 : 0,
        ...(image ? { image_id: image } : {}),
        updated_at: now,
      })
      const [at, ended] = [new Date(now), taskEvent({ ...task, status: outcome, error })]
      await emitEvent(trx, task.account_id, outcome === 'done' ? 'vps.task.completed' : 'vps.task.failed', ended, at)
      if (vps && status !== vps.status)
        await emitEvent(trx, task.account_id, 'vps.status.changed', statusEvent(task.vps_id, status), at)
    })
    return { status: outcome }
  }

  /** Ends a task that could not be run, reading the VPS's state back from the hypervisor. */
  private async abandon(taskId: number, message: string): Promise<void> {
    const task = await repo.findTask(this.db, taskId)
    if (task && (task.status === 'queued' || task.status === 'running')) {
      await this.end(task, 'failed', `The task could not be run: ${message}`)
    }
  }
}
