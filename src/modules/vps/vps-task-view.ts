import { ymdhm } from '../../clock.js'
import type { VpsTask } from './vps.repository.js'

/** A task as the API shows it. */
export interface TaskView {
  id: number
  action: string
  status: VpsTask['status']
  progress: number
  created: string
  error: string | null
}

/** A task row as the API shows it. */
export const taskView = (t: VpsTask): TaskView => ({
  id: t.id,
  action: t.action,
  status: t.status,
  progress: t.progress,
  created: ymdhm(new Date(t.created_at)),
  error: t.error,
})
