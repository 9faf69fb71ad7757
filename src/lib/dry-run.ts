/**
 * The option of every service call that honours `?test=1`: every check runs and the answer is the usual one,
 * but nothing is stored, queued, sent or published, and no driver is asked to act.
 */
export interface DryRun {
  dryRun?: boolean
}
