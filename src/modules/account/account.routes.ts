import type { FastifyPluginAsync } from 'fastify'
import { invoicesRoutes } from './invoices.routes.js'

/** Every route of the account area. */
export const accountRoutes: FastifyPluginAsync = async (app) => {
  await app.register(invoicesRoutes)
}
