import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Config } from '../../config/config.js'
import type { DB } from '../../db/tables.js'
import type { HypervisorDriver } from '../../drivers/hypervisor/hypervisor.js'
import type { WorkFaults } from '../../ops/faults.js'
import type { JobRunner } from '../../jobs/runner.js'
import { VpsService } from './vps.service.js'

/** The services of the VPS area. */
export interface VpsServices {
  vps: VpsService
}

/** Builds the VPS area: instances, tasks, SSH keys, network, backups, lifecycle and ordering. */
export function createVpsServices(deps: {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  config: Config
  hypervisor: HypervisorDriver
  /** Sandbox fault injection into asynchronous work; null in production. */
  faults?: WorkFaults | null
}): VpsServices {
  const { db, clock, jobs, config, hypervisor } = deps
  return {
    vps: new VpsService({
      db,
      clock,
      jobs,
      hypervisor,
      opts: { shutdownTimeoutSeconds: config.hypervisor.shutdownTimeoutSeconds, faults: deps.faults },
    }),
  }
}
