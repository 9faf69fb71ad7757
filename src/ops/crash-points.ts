/**
 * Named crash points for durability tests: a flow calls `crashPoint(name)` where a process may die between two of
 * its steps (after a commit, before the work it causes is queued). Armed with `HOSTAPI_CRASH_AT` in sandbox mode,
 * the process kills itself there with SIGKILL, the way a host kills it: no handler, no flush, no rollback but the
 * database's own. Unarmed (always in production) a call costs one lookup.
 */
export const CRASH_POINTS = [
  /** An order's rows are written (in its transaction), its invoice and processing job not yet. */
  'orders.create.stored',
  /** An order, its invoice and its job are committed; the invoice is not issued yet. */
  'orders.create.committed',
  /** A zone change and (with a pushing DNS driver) its push job are committed; the driver is not told yet. */
  'dns.change.committed',
  /** A domain's cancellation and the job that ends it are committed. */
  'domains.cancel.committed',
  /** The registry registered (or transferred) an ordered domain; hostapi has not recorded the domain yet. */
  'domains.order.registered',
  /** An ordered domain, its zone's delivery and its renewal job are committed; the DNS servers are not told yet. */
  'domains.order.committed',
  /** A ticket and the mails telling of it are committed. */
  'tickets.create.committed',
  /** A VPS's cancellation and the job that ends it are committed. */
  'vps.cancel.committed',
  /** A VPS task, the VPS held for it and the task's job are committed. */
  'vps.task.committed',
  /** An invoice's payment, the mail telling of it and the reconciliation of payments are committed. */
  'invoices.issue.committed',
  /** A certificate requested (PEN) and the job that checks its validation are committed. */
  'certificates.request.committed',
] as const

export type CrashPoint = (typeof CRASH_POINTS)[number]

const armed = new Set<string>()

/** Arms the crash points named (unknown names are refused, so a test never waits for a crash that cannot come). */
export function armCrashPoints(names: readonly string[]): void {
  for (const name of names) {
    if (!(CRASH_POINTS as readonly string[]).includes(name)) throw new Error(`Unknown crash point ${name}`)
    armed.add(name)
  }
}

/** Kills this process with SIGKILL when `name` is armed. */
export function crashPoint(name: CrashPoint): void {
  if (armed.size === 0 || !armed.has(name)) return
  process.kill(process.pid, 'SIGKILL')
  // SIGKILL is delivered before the call returns; should it not be, nothing after this point may run.
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
}
