import type { FastifyPluginAsync } from 'fastify'
import { invoicesRoutes } from './invoices/invoices.routes.js'
import { paymethodsRoutes } from './paymethods/paymethods.routes.js'
import { profileRoutes } from './profile/profile.routes.js'
import { ticketsRoutes } from './tickets/tickets.routes.js'
import { usersRoutes } from './users/users.routes.js'

/** Every route of the account area. */
export const accountAreaRoutes: FastifyPluginAsync = async (app) => {
  await app.register(profileRoutes)
  await app.register(paymethodsRoutes)
  await app.register(invoicesRoutes)
  await app.register(usersRoutes)
  await app.register(ticketsRoutes)
}
