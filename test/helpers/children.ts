import type { ChildProcess } from 'node:child_process'

/**
 * The processes the tests of this file started and that have not exited yet. A test stops what it started; one
 * that fails before it could (a start that timed out, an assertion in between) would leave its process running
 * after the test process ended: those are killed, by their pid, when the test process exits.
 */
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** `child`, killed when the test process exits if it has not exited by then. Every spawn of the tests goes here. */
export function owned<T extends ChildProcess>(child: T): T {
  running.add(child)
  child.once('exit', () => running.delete(child))
  return child
}
