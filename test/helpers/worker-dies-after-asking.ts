/*
 * Loaded with --import into `serve --workers N` by test/workers.test.ts (never by src/): on SIGUSR2 a worker asks the
 * primary for a count and for every worker's metrics, and kills itself as soon as both messages are written, so the
 * primary's answers go to a channel that is closed. The test stops the primary meanwhile (SIGSTOP), so the primary
 * reads the asks only once the worker is dead: the race that ended the primary, made certain instead of likely.
 */
import cluster from 'node:cluster'
import { GATHER } from '../../src/cluster.js'
import { ASK } from '../../src/db/shared-window-counter.js'

if (cluster.isWorker)
  process.on('SIGUSR2', () => {
    let written = 0
    const die = () => {
      if (++written === 2) process.kill(process.pid, 'SIGKILL')
    }
    const ask = { type: ASK, id: 1_000_000, asks: [{ key: 'dies-after-asking', windowMs: 60_000, hit: true }] }
    process.send?.(ask, undefined, undefined, die)
    process.send?.({ type: GATHER, id: 1_000_000 }, undefined, undefined, die)
  })
