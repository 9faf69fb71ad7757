import type { FastifyPluginAsync } from 'fastify'
import { sshKeysRoutes } from './ssh-keys.routes.js'
import { vpsNetworkRoutes } from './vps-network.routes.js'
import { vpsRoutes } from './vps.routes.js'
import { vpsOrderingRoutes } from './vps-ordering.routes.js'
import { vpsPowerRoutes } from './vps-power.routes.js'
import { vpsLifecycleRoutes } from './vps-lifecycle.routes.js'
import { vpsBackupsRoutes } from './vps-backups.routes.js'

/**
 * Every route of the VPS area: SSH keys, network, instances, ordering, power, lifecycle (cancellation, rescue,
 * reinstall, root password, hostname) and backups.
 */
export const vpsAreaRoutes: FastifyPluginAsync = async (app) => {
  // The order of registration is the order of the operations in the OpenAPI document.
  for (const routes of [
    sshKeysRoutes, vpsNetworkRoutes, vpsRoutes, vpsOrderingRoutes, vpsPowerRoutes, vpsLifecycleRoutes, vpsBackupsRoutes,
  ]) {
    await app.register(routes)
  }
}
