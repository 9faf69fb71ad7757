import type { FastifyPluginAsync } from 'fastify'
import { contactsRoutes } from './contacts/contacts.routes.js'
import { dnsTemplatesRoutes } from './templates/dns-templates.routes.js'
import { dnsRoutes, zoneFileRoutes } from './dns/dns.routes.js'
import { domainOrdersRoutes } from './orders/domain-orders.routes.js'
import { extensionsRoutes } from './extensions/extensions.routes.js'
import { nameserversRoutes } from './nameservers/nameservers.routes.js'
import { domainExitRoutes, domainsRoutes } from './domains.routes.js'

/**
 * Every route of the domains area: domains, DNS, contact and nameserver profiles, DNS templates, extensions,
 * availability and orders.
 */
export const domainAreaRoutes: FastifyPluginAsync = async (app) => {
  const areas = [
    domainsRoutes,
    domainExitRoutes,
    dnsRoutes,
    zoneFileRoutes,
    contactsRoutes,
    nameserversRoutes,
    dnsTemplatesRoutes,
    extensionsRoutes,
    domainOrdersRoutes,
  ]
  for (const routes of areas) await app.register(routes)
}
