import type { FastifyPluginAsync } from 'fastify'
import { sshKeysRoutes } from './ssh-keys.routes.js'
import { vpsFirewallRoutes, vpsFloatingIpRoutes, vpsVpcRoutes } from './vps-network.routes.js'
import { vpsListRoutes, vpsRoutes } from './vps.routes.js'
import { vpsOrderingRoutes } from './vps-ordering.routes.js'
import { vpsPowerRoutes } from './vps-power.routes.js'
import { vpsCancellationRoutes, vpsSystemRoutes } from './vps-lifecycle.routes.js'
import { vpsBackupsRoutes } from './vps-backups.routes.js'

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
