/** The VPS state rules: which action fits which settled status, and what a task shows meanwhile. */

/** Actions that run as tasks. */
export type TaskAction =
  | 'create'
  | 'start'
  | 'stop'
  | 'poweroff'
  | 'restart'
  | 'rescue_on'
  | 'rescue_off'
  | 'reinstall'
  | 'backup'
  | 'restore'
/** Every action the state rules know, tasks and immediate ones. */
export type VpsAction = Exclude<TaskAction, 'create'> | 'reset_password' | 'hostname'

/** The status a VPS shows while a task of this action holds it (null: unchanged). */
export const TRANSITIONAL: Record<TaskAction, string | null> = {
  create: 'installing',
  start: 'starting',
  stop: 'stopping',
  poweroff: 'stopping',
  restart: 'restarting',
  rescue_on: 'restarting',
  rescue_off: 'restarting',
  reinstall: 'installing',
  backup: null,
  restore: 'restoring',
}

/** The refusal of every action on a terminated VPS. */
export const TERMINATED_REFUSAL = 'This VPS has been cancelled and removed'

/**
 * The state rules: for a settled status (running, stopped, rescue, error, terminated), whether an action may run, and the text when it may not.
 * A VPS held by a task refuses every action with `VPS is locked by a running task` before these apply.
 */
export function refusal(status: string, action: VpsAction): string | null {
  if (status === 'terminated') return TERMINATED_REFUSAL
  if (status === 'error') return action === 'reinstall' ? null : 'The VPS is in an error state: reinstall it'
  const running = status === 'running'
  const rescue = status === 'rescue'
  const stopped = status === 'stopped'
  switch (action) {
    case 'start':
      return stopped ? null : 'VPS is already running'
    case 'stop':
    case 'poweroff':
      return stopped ? 'VPS is already stopped' : null
    case 'restart':
      return stopped ? 'VPS is stopped: start it instead' : null
    case 'rescue_on':
      return rescue ? 'Rescue mode is already enabled' : null
    case 'rescue_off':
      return rescue ? null : 'Rescue mode is not enabled'
    case 'reset_password':
      return running
        ? null
        : rescue
          ? 'The root password cannot be reset in rescue mode'
          : 'The VPS must be running to reset the root password'
    case 'reinstall':
    case 'hostname':
    case 'backup':
    case 'restore':
      return running || rescue || stopped ? null : `The VPS cannot do this while ${status}`
  }
}
