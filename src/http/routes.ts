import type { FastifyPluginAsync } from 'fastify'
import { toolsRoutes } from '../modules/tools/tools.routes.js'
import { ordersRoutes } from '../modules/orders/orders.routes.js'
import { domainAreaRoutes } from '../modules/domains/area.routes.js'
import { certificateRoutes, certificatesRoutes } from '../modules/certificates/certificates.routes.js'
import { accountAreaRoutes } from '../modules/account/area.routes.js'
import { affiliateRoutes } from '../modules/affiliate/affiliate.routes.js'
import { vpsAreaRoutes } from '../modules/vps/area.routes.js'
import { webhooksRoutes } from '../modules/webhooks/webhooks.routes.js'

/** Every module's routes, mounted under the API prefix. */
export const apiRoutes: readonly FastifyPluginAsync[] = [
  toolsRoutes,
  ordersRoutes,
  domainAreaRoutes,
  certificatesRoutes,
  certificateRoutes,
  accountAreaRoutes,
  affiliateRoutes,
  vpsAreaRoutes,
  webhooksRoutes,
]
