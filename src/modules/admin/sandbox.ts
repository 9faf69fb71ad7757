import { iso } from '../../clock.js'
import { errors } from '../../errors.js'
import type { JobRunner } from '../../jobs/runner.js'
import type { Sandbox } from '../../ops/sandbox.js'

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }

/** `30d`, `12h`, `15m`, `45s`, `2w` (a leading `-` goes back) in milliseconds; throws a 400 otherwise. */
export function parseDuration(text: string): number {
  const m = /^(-?)(\d{1,7})\s*([smhdw])$/.exec(text.trim())
  if (!m) throw errors.adminInvalidDuration()
  return (m[1] ? -1 : 1) * Number(m[2]) * UNITS[m[3]]
}

/** Moves the sandbox clock (by `advance`, or to `to`), then runs the jobs that became due. */
export async function moveClock(sandbox: Sandbox, jobs: JobRunner, input: { advance?: string; to?: string }) {
  const { clock } = sandbox
  if (input.advance !== undefined) clock.advance(parseDuration(input.advance))
  if (input.to !== undefined) {
    const target = new Date(/^\d{4}-\d{2}-\d{2}$/.test(input.to) ? `${input.to}T00:00:00Z` : input.to)
    if (Number.isNaN(target.getTime())) throw errors.adminInvalidTime('to')
    clock.advance(target.getTime() - clock.now().getTime())
  }
  const jobsRun = input.advance !== undefined || input.to !== undefined ? await jobs.drain() : 0
  return clockState(sandbox, jobsRun)
}

/** The sandbox time, its distance from real time, and how many jobs a clock move ran. */
export function clockState(sandbox: Sandbox, jobsRun = 0) {
  const { clock } = sandbox
  return { now: iso(clock.now()), offset_seconds: Math.round(clock.offset() / 1000), jobs_run: jobsRun }
}
