import type { EventSampler, EventSamplers } from '../webhooks/webhook-events.js'
import * as repo from './vps.repository.js'
import type { VpsTask } from './vps.repository.js'
import { taskView } from './vps-task-view.js'

/** The data of `vps.task.completed` and `vps.task.failed`: the VPS and the task as `GET /vps/{id}/tasks` shows it. */
export const taskEvent = (task: VpsTask) => ({ vps_id: task.vps_id, ...taskView(task) })

/** The data of `vps.status.changed`: the VPS and its new status. */
export const statusEvent = (vpsId: number, status: string) => ({ vps_id: vpsId, status })

// A task event from the account's newest task that ended so (or else its newest task, as if it had ended so).
const ended =
  (status: 'done' | 'failed'): EventSampler =>
  async (db, accountId) => {
    const task = (await repo.latestTask(db, accountId, status)) ?? (await repo.latestTask(db, accountId))
    const error = status === 'done' ? null : (task?.error ?? 'The hypervisor reported a failure')
    return task && { data: taskEvent({ ...task, status, progress: 100, error }) }
  }

/** The VPS events' data from the account's own tasks and VPS, as the task runner sends them (sandbox triggers). */
export const vpsEventSamplers: EventSamplers = {
  'vps.task.completed': ended('done'),
  'vps.task.failed': ended('failed'),
  'vps.status.changed': async (db, accountId) => {
    const vps = (await repo.listVps(db, accountId)).at(-1)
    return vps && { data: statusEvent(vps.id, vps.status) }
  },
}
