/** Gives the event loop a turn (I/O, timers, other requests) before going on: between the slices of a long job. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * The slices of a long loop on the event loop: `if (slices.due) await slices.next()` at each step lets other work
 * run once the current slice has taken `budgetMs`, so no slice holds every other request for longer.
 */
export class TimeSlices {
  private start = performance.now()

  constructor(private readonly budgetMs = 10) {}

  /** True once the current slice has used its budget. */
  get due(): boolean {
    return performance.now() - this.start >= this.budgetMs
  }

  /** Gives the event loop a turn and starts the next slice. */
  async next(): Promise<void> {
    await nextTurn()
    this.start = performance.now()
  }
}
