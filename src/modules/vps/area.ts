import type { FastifyPluginAsync } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Config } from '../../config/config.js'
import type { DB } from '../../db/tables.js'
import type { HypervisorDriver } from '../../drivers/hypervisor/hypervisor.js'
import type { WorkFaults } from '../../ops/faults.js'
import type { JobRunner } from '../../jobs/runner.js'
import { VpsService } from './vps.service.js'
import { sshKeysRoutes } from './ssh-keys.routes.js'
import { vpsFirewallRoutes, vpsFloatingIpRoutes, vpsVpcRoutes } from './vps-network.routes.js'
import { vpsListRoutes, vpsRoutes } from './vps.routes.js'
import { vpsOrderingRoutes } from './vps-ordering.routes.js'
import { vpsPowerRoutes } from './vps-power.routes.js'
import { vpsCancellationRoutes, vpsSystemRoutes } from './vps-lifecycle.routes.js'
import { vpsBackupsRoutes } from './vps-backups.routes.js'

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
    vps: new VpsService(db, clock, jobs, hypervisor, {
      shutdownTimeoutSeconds: config.hypervisor.shutdownTimeoutSeconds,
      faults: deps.faults,
    }),
  }
}

/**
 * Every route of the VPS area: SSH keys, network, the list and images, ordering, one VPS, cancellation, power,
 * the system (rescue, reinstall, root password, hostname) and backups.
 */
export const vpsAreaRoutes: FastifyPluginAsync = async (app) => {
  // The order of registration is the order of the operations in the OpenAPI document.
  for (const routes of [
    sshKeysRoutes,
    vpsFloatingIpRoutes,
    vpsFirewallRoutes,
    vpsVpcRoutes,
    vpsListRoutes,
    vpsOrderingRoutes,
    vpsRoutes,
    vpsCancellationRoutes,
    vpsPowerRoutes,
    vpsSystemRoutes,
    vpsBackupsRoutes,
  ]) {
    await app.register(routes)
  }
}
